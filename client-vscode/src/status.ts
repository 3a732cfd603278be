import * as vscode from 'vscode';
import { AnalysisStatus, DOCUMENT_SELECTOR, ServerManager, ServerState } from './server';

const TEXT: Record<ServerState, string> = {
  starting: '$(loading~spin) gradguard',
  running: '$(check) gradguard',
  stopped: '$(debug-stop) gradguard',
  disabled: '$(circle-slash) gradguard',
  notInstalled: '$(error) gradguard',
  failed: '$(error) gradguard',
};

/** The `{}` language status entry for Python files: server state, interpreter, last analysis. */
export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;
  private lastAnalysis: { at: Date; status: AnalysisStatus } | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly manager: ServerManager) {
    this.item = vscode.languages.createLanguageStatusItem('gradguard.status', DOCUMENT_SELECTOR);
    this.item.name = 'gradguard';
    this.subscriptions.push(
      manager.onDidChangeState(() => this.render()),
      manager.onDidReceiveStatus((status) => this.onStatus(status)),
    );
    this.render();
  }

  private onStatus(status: AnalysisStatus): void {
    this.lastAnalysis = { at: new Date(), status };
    this.render();
  }

  private render(): void {
    const { state, launch, problem, serverVersion } = this.manager;
    this.item.text = TEXT[state];
    this.item.busy = state === 'starting';
    this.item.severity =
      state === 'failed' || state === 'notInstalled' ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    const parts: string[] = [];
    if (problem && state !== 'running') {
      parts.push(problem);
    } else {
      parts.push(state);
    }
    if (launch) {
      const reports = state === 'running' && serverVersion && serverVersion !== launch.gradguardVersion ? ` (the server reports ${serverVersion})` : '';
      parts.push(launch.description + reports);
    }
    if (state === 'running') {
      parts.push(this.describeLastAnalysis());
    }
    this.item.detail = parts.join(' · ');
    this.item.command =
      state === 'running' || state === 'starting'
        ? { title: 'Logs', command: 'gradguard.showLogs' }
        : { title: 'Restart', command: 'gradguard.restart' };
  }

  /** From the server's `gradguard/status` notification, when it sends one. */
  private describeLastAnalysis(): string {
    if (!this.lastAnalysis) {
      return 'no analysis reported yet';
    }
    const { at, status } = this.lastAnalysis;
    const file = status.uri ? ` of ${status.uri.replace(/^.*[\\/]/, '')}` : '';
    const time = at.toLocaleTimeString();
    switch (status.state) {
      case 'ok': {
        const ms = status.analysedMs === undefined ? '' : ` in ${Math.round(status.analysedMs)} ms`;
        const findings = status.findings === undefined ? '' : `, ${status.findings} finding${status.findings === 1 ? '' : 's'}`;
        return `last analysis${file}${ms}${findings}, at ${time}`;
      }
      case 'error':
        return `last analysis${file} failed at ${time} (see the logs)`;
      default:
        return `last analysis${file}: ${status.state}, at ${time}`;
    }
  }

  dispose(): void {
    this.item.dispose();
    this.subscriptions.forEach((d) => d.dispose());
  }
}
