import * as vscode from 'vscode';
import { readShowNotifications } from './settings';

export type NoticeLevel = 'error' | 'warning' | 'info';

/** Whether `gradguard.showNotifications` lets a notice of this level through (the logs get every notice). */
export function notificationAllowed(level: NoticeLevel): boolean {
  const setting = readShowNotifications();
  switch (setting) {
    case 'off':
      return false;
    case 'onError':
      return level === 'error';
    case 'onWarning':
      return level !== 'info';
    default:
      return true;
  }
}

/**
 * Shows a notification when `gradguard.showNotifications` allows its level, else resolves to undefined
 * at once (the caller has logged the message already).
 */
export function notify(level: NoticeLevel, message: string, ...items: string[]): Thenable<string | undefined> {
  if (!notificationAllowed(level)) {
    return Promise.resolve(undefined);
  }
  const show =
    level === 'error'
      ? vscode.window.showErrorMessage
      : level === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  return show(message, ...items);
}
