import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRegistrationOptions,
  ExecuteCommandRequest,
  ErrorHandler,
  LanguageClient,
  LanguageClientOptions,
  RegistrationData,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { CLIENT_COMMANDS } from './commands';
import { checkGradguardImportable, Interpreter, pythonExtensionApi, resolveInterpreter, terminalCommandLine } from './interpreter';
import { readLaunchSettings, readServerSettings, SECTION, Severity, severityFor } from './settings';

export type ServerState = 'starting' | 'running' | 'stopped' | 'disabled' | 'notInstalled' | 'failed';

/** The `gradguard/status` notification the server sends after each analysis (optional). */
export interface AnalysisStatus {
  /** "ok", "error", "skipped" or "disabled". */
  state: string;
  analysedMs?: number;
  uri?: string;
  findings?: number;
}

export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'python' },
  { scheme: 'untitled', language: 'python' },
  { scheme: 'vscode-notebook-cell', language: 'python' },
];

/** After this many crashes within CRASH_WINDOW_MS the server stays down until the user restarts it. */
const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 3 * 60 * 1000;

/**
 * Owns the language client: finds the interpreter, checks that gradguard is importable there,
 * starts `python -m gradguard server`, restarts it on request (overlapping requests coalesce),
 * and stops it for good after repeated crashes instead of looping.
 */
export class ServerManager implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: Interpreter | undefined;
  state: ServerState = 'stopped';
  /** Why the server is not running, when it is not. */
  problem: string | undefined;

  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly statusEmitter = new vscode.EventEmitter<AnalysisStatus>();
  readonly onDidReceiveStatus = this.statusEmitter.event;

  private restartQueue: Promise<void> = Promise.resolve();
  private restartPending = false;
  private crashTimes: number[] = [];
  private firstDiagnosticsSeen = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.disposables.push(this.stateEmitter, this.statusEmitter);
  }

  /** Stops the running server (if any) and starts a fresh one; overlapping calls run once. */
  restart(reason: string): Promise<void> {
    if (this.restartPending) {
      return this.restartQueue;
    }
    this.restartPending = true;
    this.restartQueue = this.restartQueue.then(async () => {
      this.restartPending = false;
      this.log.info(`(Re)starting the server: ${reason}`);
      try {
        await this.stop();
        await this.start();
      } catch (err) {
        this.fail(`Unexpected error while starting the server: ${String(err)}`);
      }
    });
    return this.restartQueue;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.state !== State.Stopped) {
          await client.stop(5000);
        }
      } catch (err) {
        this.log.warn(`Stopping the server: ${String(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState('stopped');
  }

  /** Sends the current `gradguard.*` settings to the running server. */
  sendSettings(): void {
    if (this.client?.state === State.Running) {
      void this.client.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { [SECTION]: readServerSettings() },
      });
    }
  }

  private async start(): Promise<void> {
    const launch = readLaunchSettings();
    if (!launch.enable) {
      this.problem = 'disabled by the gradguard.enable setting';
      this.setState('disabled');
      return;
    }
    this.problem = undefined;
    this.setState('starting');
    this.interpreter = await resolveInterpreter(launch.interpreter, this.log);
    const python = this.interpreter.command;
    this.log.info(`Interpreter: ${python} (from ${this.interpreter.origin})`);

    const check = await checkGradguardImportable(python);
    if (!check.ok) {
      this.problem = check.missingPython ? `Python not found: ${python}` : `gradguard is not importable in ${python}`;
      this.log.error(`${this.problem}: ${check.reason}`);
      this.setState('notInstalled');
      void this.explainNotInstalled(python, check.missingPython);
      return;
    }
    this.log.info(`gradguard ${check.version} found in ${python}`);

    const args = ['-m', 'gradguard', 'server', ...launch.args];
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const serverOptions: ServerOptions = { command: python, args, options: { cwd } };
    const client = new QuietLanguageClient('gradguard', 'gradguard', serverOptions, this.clientOptions(), (message) =>
      this.fail(`The gradguard server could not be restarted (${message}).`),
    );
    skipClientCommands(client);
    client.onNotification('gradguard/status', (status: AnalysisStatus) => this.statusEmitter.fire(status));
    // Follow the client's own restarts after a crash (see errorHandler).
    client.onDidChangeState(({ newState }) => {
      if (this.client === client && this.state !== 'failed') {
        this.setState(newState === State.Running ? 'running' : newState === State.Starting ? 'starting' : 'stopped');
      }
    });
    this.client = client;
    this.firstDiagnosticsSeen = false;
    traceEvent('serverStarting', { python, args });
    this.log.info(`Starting: ${terminalCommandLine(python, args)}`);
    let failure: string | undefined;
    try {
      await client.start();
    } catch (err) {
      failure = String(err instanceof Error ? err.message : err);
    }
    if (this.client !== client) {
      return; // stopped while starting
    }
    // When the process dies during initialize, vscode-languageclient 9 may resolve start() anyway
    // (its close handler drops the pending start promise), so check the state as well.
    if (failure !== undefined || client.state !== State.Running) {
      // Say so once; do not retry.
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.fail(
        `The gradguard server did not start (${terminalCommandLine(python, args)} failed: ${failure ?? 'the process exited'}). Its error output is in the logs.`,
      );
      return;
    }
    traceEvent('clientReady');
    this.setState('running');
  }

  private clientOptions(): LanguageClientOptions {
    return {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      diagnosticCollectionName: 'gradguard',
      initializationOptions: { settings: readServerSettings() },
      // Hovers may link to rule docs (command:gradguard.showRuleDocs?...); nothing else runs from a hover.
      markdown: { isTrusted: { enabledCommands: ['gradguard.showRuleDocs'] }, supportHtml: false },
      errorHandler: this.errorHandler(),
      initializationFailedHandler: (err) => {
        this.log.error(`initialize failed: ${String(err)}`);
        return false;
      },
      middleware: {
        // The server's "Show documentation" code action runs `gradguard.ruleDocs`, which only
        // returns Markdown; show it.
        executeCommand: (command, args, next) =>
          command === 'gradguard.ruleDocs' && typeof args[0] === 'string'
            ? vscode.commands.executeCommand('gradguard.showRuleDocs', args[0])
            : next(command, args),
        handleDiagnostics: (uri, diagnostics, next) => {
          if (!this.firstDiagnosticsSeen && diagnostics.length > 0) {
            this.firstDiagnosticsSeen = true;
            traceEvent('firstDiagnostics', { uri: uri.toString(), count: diagnostics.length });
          }
          const severity = readServerSettings().severity;
          next(uri, diagnostics.map((d) => decorateDiagnostic(d, severity)));
        },
      },
    };
  }

  private errorHandler(): ErrorHandler {
    return {
      error: (_error, _message, count) => {
        // A broken pipe comes with the process exit, which `closed` handles (restart or not);
        // only a stream of unreadable messages shuts the server down.
        if (count !== undefined && count > 3) {
          this.fail('The gradguard server sent unreadable messages and was shut down.');
          return { action: ErrorAction.Shutdown, handled: true };
        }
        return { action: ErrorAction.Continue, handled: true };
      },
      closed: () => {
        if (this.state !== 'running') {
          // It died before or during initialize: start() reports that once; never loop.
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        const now = Date.now();
        this.crashTimes = this.crashTimes.filter((t) => now - t < CRASH_WINDOW_MS);
        this.crashTimes.push(now);
        if (this.crashTimes.length <= MAX_CRASHES) {
          this.log.warn(`The server exited; restarting (${this.crashTimes.length} of ${MAX_CRASHES}).`);
          return { action: CloseAction.Restart, handled: true };
        }
        this.crashTimes = [];
        this.fail(`The gradguard server exited ${MAX_CRASHES + 1} times in 3 minutes and was not restarted.`);
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
  }

  private fail(message: string): void {
    this.problem = message;
    this.log.error(message);
    this.setState('failed');
    void vscode.window.showErrorMessage(message, 'Show Logs', 'Restart').then((choice) => {
      if (choice === 'Show Logs') {
        this.log.show();
      } else if (choice === 'Restart') {
        void this.restart('Restart chosen after a failure');
      }
    });
  }

  /** One notification with the exact install command and a button that runs it. */
  private async explainNotInstalled(python: string, missingPython: boolean): Promise<void> {
    if (missingPython) {
      const choice = await vscode.window.showErrorMessage(
        `gradguard: no Python interpreter at '${python}'. Set "gradguard.interpreter" or select an interpreter in the Python extension.`,
        'Open Settings',
        'Show Logs',
      );
      if (choice === 'Open Settings') {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
      } else if (choice === 'Show Logs') {
        this.log.show();
      }
      return;
    }
    const installArgs = ['-m', 'pip', 'install', 'gradguard'];
    const commandLine = terminalCommandLine(python, installArgs);
    const buttons = ['Install in Terminal', 'Open Settings'];
    if (await pythonExtensionApi()) {
      buttons.push('Select Interpreter');
    }
    const choice = await vscode.window.showWarningMessage(
      `gradguard is not installed in ${python}. Install it with: ${commandLine}`,
      ...buttons,
    );
    if (choice === 'Install in Terminal') {
      this.installInTerminal(commandLine);
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
    } else if (choice === 'Select Interpreter') {
      await vscode.commands.executeCommand('python.setInterpreter');
    }
  }

  /** Runs the install command in a terminal; with shell integration, restarts the server when it succeeds. */
  private installInTerminal(commandLine: string): void {
    const terminal = vscode.window.createTerminal({ name: 'gradguard: install' });
    terminal.show();
    const subscription = vscode.window.onDidChangeTerminalShellIntegration(({ terminal: t, shellIntegration }) => {
      if (t !== terminal) {
        return;
      }
      subscription.dispose();
      clearTimeout(fallback);
      const execution = shellIntegration.executeCommand(commandLine);
      const ended = vscode.window.onDidEndTerminalShellExecution((e) => {
        if (e.execution === execution) {
          ended.dispose();
          if (e.exitCode === 0) {
            void this.restart('gradguard was installed');
          }
        }
      });
      this.disposables.push(ended);
    });
    // No shell integration (for example a custom shell): type the command; the user restarts afterwards.
    const fallback = setTimeout(() => {
      subscription.dispose();
      terminal.sendText(commandLine);
    }, 3000);
    this.disposables.push(subscription);
  }

  private setState(state: ServerState): void {
    this.state = state;
    this.stateEmitter.fire(state);
  }

  dispose(): void {
    void this.stop();
    this.disposables.forEach((d) => d.dispose());
  }
}

/**
 * A language client that only logs its own errors: vscode-languageclient would otherwise add its
 * notifications ("couldn't create connection to server", "Restarting server failed") next to the
 * one the ServerManager shows. A failed automatic restart is handed to `onRestartFailed`.
 */
class QuietLanguageClient extends LanguageClient {
  constructor(
    id: string,
    name: string,
    serverOptions: ServerOptions,
    clientOptions: LanguageClientOptions,
    private readonly onRestartFailed: (message: string) => void,
  ) {
    super(id, name, serverOptions, clientOptions);
  }

  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
    if (message.startsWith('Restarting server failed')) {
      this.onRestartFailed(data instanceof Error ? data.message : String(data ?? message));
    }
  }
}

/**
 * vscode-languageclient registers a VS Code command for every command the server advertises in
 * `executeCommandProvider`, and registering an id twice fails. The server's commands
 * may share ids with this extension's palette commands, so the
 * extension's own command ids are left out of that registration; the server still receives them
 * through `workspace/executeCommand`.
 */
function skipClientCommands(client: LanguageClient): void {
  type Feature = { register(data: RegistrationData<ExecuteCommandRegistrationOptions>): void };
  const feature = (client as unknown as { getFeature(method: string): Feature | undefined }).getFeature(ExecuteCommandRequest.method);
  if (!feature) {
    return;
  }
  const register = feature.register.bind(feature);
  feature.register = (data) =>
    register({
      ...data,
      registerOptions: { ...data.registerOptions, commands: data.registerOptions.commands.filter((c) => !CLIENT_COMMANDS.includes(c)) },
    });
}

/**
 * Links each gradguard code to its rule docs inside VS Code (offline), and applies the
 * `gradguard.severity` setting.
 */
function decorateDiagnostic(diagnostic: vscode.Diagnostic, severityMap: Record<string, Severity>): vscode.Diagnostic {
  const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
  if (code === undefined) {
    return diagnostic;
  }
  const value = String(code);
  diagnostic.code = { value, target: ruleDocsUri(value) };
  const severity = severityFor(value, severityMap);
  if (severity !== undefined) {
    diagnostic.severity = severity;
  }
  return diagnostic;
}

export function ruleDocsUri(code: string): vscode.Uri {
  return vscode.Uri.parse(`command:gradguard.showRuleDocs?${encodeURIComponent(JSON.stringify([code]))}`);
}

/**
 * Timing events for the end-to-end tests (GRADGUARD_CLIENT_TRACE_FILE, JSON lines). Off unless the
 * variable is set in the environment of VS Code's extension host.
 */
export function traceEvent(event: string, extra: Record<string, unknown> = {}): void {
  const file = process.env.GRADGUARD_CLIENT_TRACE_FILE;
  if (!file) {
    return;
  }
  try {
    fs.appendFileSync(file, JSON.stringify({ event, t: Date.now(), ...extra }) + '\n');
  } catch {
    // tracing must never break the extension
  }
}
