import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { pythonExtensionApi } from './interpreter';
import { registerLanguageModelTools } from './lmTools';
import { MarkdownViews } from './markdown';
import { registerMcpServer } from './mcpProvider';
import { ServerManager, traceEvent } from './server';
import { affectsLaunch, SECTION } from './settings';
import { StatusItem } from './status';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  traceEvent('activate');
  const log = vscode.window.createOutputChannel('gradguard', { log: true });
  manager = new ServerManager(log, context);
  const views = new MarkdownViews();
  context.subscriptions.push(log, manager, views, new StatusItem(manager), ...registerCommands(manager, views, log));
  context.subscriptions.push(...registerLanguageModelTools(manager), ...registerMcpServer(manager, log));

  const server = manager;
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsLaunch(e)) {
        void server.restart('gradguard.enable, interpreter, args, importStrategy or path changed');
      } else if (e.affectsConfiguration(SECTION)) {
        server.sendSettings();
      }
    }),
    // Trusting the workspace unlocks its interpreter and args settings and the Python extension's choice.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart('the workspace is now trusted')),
  );

  const python = await pythonExtensionApi();
  if (python) {
    context.subscriptions.push(
      python.environments.onDidChangeActiveEnvironmentPath(() => {
        if (!vscode.workspace.getConfiguration(SECTION).get<string>('interpreter')) {
          void server.restart('the Python extension selected another interpreter');
        }
      }),
    );
  }

  void server.restart('activation');
}

export async function deactivate(): Promise<void> {
  await manager?.stop();
}
