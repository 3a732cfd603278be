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
  MessageType,
  RegistrationData,
  RevealOutputChannelOn,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageParams,
  State,
} from 'vscode-languageclient/node';
import { CLIENT_COMMANDS } from './clientCommands';
import { pythonExtensionApi, terminalCommandLine } from './interpreter';
import { Bundle, gradguardCommand, isLaunch, Launch, processEnv, resolveLaunch } from './launch';
import { notify } from './notify';
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
  /** How gradguard runs now (also used by the CLI commands); undefined until resolved. */
  launch: Launch | undefined;
  /** The version the running server reported at initialize (serverInfo.version). */
  serverVersion: string | undefined;
  readonly bundle: Bundle;
  readonly extensionVersion: string;
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

  /** Fallback and mismatch notices already shown in this session (each is shown once). */
  private readonly shownNotices = new Set<string>();

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly context: vscode.ExtensionContext,
  ) {
    this.bundle = new Bundle(context.extensionPath);
    this.extensionVersion = String(context.extension.packageJSON.version ?? '?');
    this.disposables.push(this.stateEmitter, this.statusEmitter);
  }

  /** The current launch, resolving one when the server has not started (for the CLI commands). */
  async currentLaunch(): Promise<Launch | undefined> {
    if (this.launch) {
      return this.launch;
    }
    const resolved = await resolveLaunch(this.bundle, this.log);
    return isLaunch(resolved) ? resolved : undefined;
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
    const settings = readLaunchSettings();
    if (!settings.enable) {
      this.problem = 'disabled by the gradguard.enable setting';
      this.setState('disabled');
      return;
    }
    this.problem = undefined;
    this.launch = undefined;
    this.serverVersion = undefined;
    this.setState('starting');
    const resolved = await resolveLaunch(this.bundle, this.log);
    if (!isLaunch(resolved)) {
      this.problem = resolved.message;
      this.log.error(`gradguard cannot start: ${resolved.message}`);
      this.setState('notInstalled');
      void this.explainNoPython(resolved.message);
      return;
    }
    const launch = resolved;
    this.launch = launch;
    this.log.info(`Server: ${launch.description}`);
    if (launch.fallback) {
      this.log.warn(launch.fallback.message);
      void this.explainFallback(launch);
    }

    const { command, args } = gradguardCommand(launch, ['server', ...settings.args]);
    const python = command;
    // Never the workspace as cwd, and Python's safe-path mode: a `gradguard/` package at the root of an
    // untrusted repository must not be imported instead of the real one.
    const serverOptions: ServerOptions = { command, args, options: { cwd: this.bundle.safeCwd, env: processEnv() } };
    const client = new QuietLanguageClient('gradguard', 'gradguard', serverOptions, this.clientOptions(), (message) =>
      this.fail(`The gradguard server could not be restarted (${message}).`),
    );
    skipClientCommands(client);
    client.onNotification('gradguard/status', (status: AnalysisStatus) => this.statusEmitter.fire(status));
    // The server's own messages (a broken [tool.gradguard], a file too large to analyse) follow
    // gradguard.showNotifications like the extension's; vscode-languageclient would show every one.
    client.onNotification(ShowMessageNotification.type, (message) => this.showServerMessage(message));
    // Follow the client's own restarts after a crash (see errorHandler).
    client.onDidChangeState(({ newState }) => {
      if (this.client === client && this.state !== 'failed') {
        this.setState(newState === State.Running ? 'running' : newState === State.Starting ? 'starting' : 'stopped');
      }
    });
    this.client = client;
    this.firstDiagnosticsSeen = false;
    traceEvent('serverStarting', { python, args, kind: launch.kind, description: launch.description });
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
    this.serverVersion = client.initializeResult?.serverInfo?.version;
    traceEvent('clientReady', { kind: launch.kind, serverVersion: this.serverVersion });
    this.log.info(`Server running: gradguard ${this.serverVersion ?? '(no version reported)'}, ${launch.description}`);
    this.setState('running');
    void notify('info', `gradguard ${this.serverVersion ?? ''} is running: ${launch.description}.`);
    this.checkVersion(launch);
  }

  /**
   * The version handshake: the server reports its version at initialize (serverInfo). When it is not the
   * extension's, say so once per pair of versions, with the ways out.
   */
  private checkVersion(launch: Launch): void {
    const server = this.serverVersion;
    if (server === this.extensionVersion) {
      return;
    }
    const key = `versionMismatch:${launch.kind}:${launch.command}:${server}:${this.extensionVersion}`;
    if (this.context.globalState.get<boolean>(key)) {
      this.log.warn(`Server version ${server ?? 'unknown'} differs from the extension's ${this.extensionVersion} (already reported).`);
      return;
    }
    void this.context.globalState.update(key, true);
    const where = launch.kind === 'path' ? launch.command : `the environment of ${launch.command}`;
    const message = `gradguard: the server in ${where} is version ${server ?? 'unknown'}, this extension is ${this.extensionVersion}; some features may not match. Use the bundled server, or install ${this.extensionVersion} there.`;
    this.log.warn(message);
    const buttons = ['Use Bundled Server'];
    if (launch.kind === 'environment' && this.bundle.wheel) {
      buttons.push(`Install ${this.extensionVersion} in Terminal`);
    }
    void notify('warning', message, ...buttons).then((choice) => {
      if (choice === 'Use Bundled Server') {
        void useBundledServer();
      } else if (choice && launch.kind === 'environment') {
        this.installInTerminal(this.installCommand(launch.command));
      }
    });
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

  /** A `window/showMessage` from the server: always logged, shown when gradguard.showNotifications allows its level. */
  private showServerMessage(message: ShowMessageParams): void {
    const level = message.type === MessageType.Error ? 'error' : message.type === MessageType.Warning ? 'warning' : 'info';
    (level === 'error' ? this.log.error : level === 'warning' ? this.log.warn : this.log.info).call(this.log, `Server: ${message.message}`);
    void notify(level, message.message);
  }

  private fail(message: string): void {
    this.problem = message;
    this.log.error(message);
    this.setState('failed');
    void notify('error', message, 'Show Logs', 'Restart').then((choice) => {
      if (choice === 'Show Logs') {
        this.log.show();
      } else if (choice === 'Restart') {
        void this.restart('Restart chosen after a failure');
      }
    });
  }

  /** `python -m pip install <the wheel inside the extension>`: the same gradguard as the bundled one. */
  installCommand(python: string): string {
    return terminalCommandLine(python, ['-m', 'pip', 'install', this.bundle.wheel ?? 'gradguard']);
  }

  /** The bundled server runs instead of what the settings asked for: say so once, with the way out. */
  private async explainFallback(launch: Launch): Promise<void> {
    const fallback = launch.fallback;
    if (!fallback || this.shownNotices.has(fallback.message)) {
      return;
    }
    this.shownNotices.add(fallback.message);
    const buttons: string[] = [];
    let commandLine: string | undefined;
    if (fallback.installInto && this.bundle.wheel) {
      commandLine = this.installCommand(fallback.installInto);
      buttons.push('Install in Terminal');
    }
    buttons.push('Use Bundled Server');
    if (await pythonExtensionApi()) {
      buttons.push('Select Interpreter');
    }
    const text = commandLine ? `${fallback.message} To use the environment's own, install it: ${commandLine}` : fallback.message;
    const choice = await notify(fallback.level, text, ...buttons);
    if (choice === 'Install in Terminal' && commandLine) {
      this.installInTerminal(commandLine);
    } else if (choice === 'Use Bundled Server') {
      await useBundledServer();
    } else if (choice === 'Select Interpreter') {
      await vscode.commands.executeCommand('python.setInterpreter');
    }
  }

  /** No Python can run gradguard: one error, with the settings to change. */
  private async explainNoPython(reason: string): Promise<void> {
    const buttons = ['Open Settings', 'Show Logs'];
    if (await pythonExtensionApi()) {
      buttons.push('Select Interpreter');
    }
    const choice = await notify(
      'error',
      `gradguard: ${reason}. Select a CPython ${this.bundle.manifest?.pythons.join(', ') ?? ''} interpreter, or set "gradguard.interpreter" or "gradguard.path".`,
      ...buttons,
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'gradguard.interpreter');
    } else if (choice === 'Show Logs') {
      this.log.show();
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
 * Sets `gradguard.importStrategy` to useBundled and clears `gradguard.path`, where the user set them
 * (workspace folder, workspace or user settings); the configuration change restarts the server.
 */
async function useBundledServer(): Promise<void> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  for (const key of ['importStrategy', 'path']) {
    const inspected = cfg.inspect(key);
    const value = key === 'path' ? undefined : 'useBundled';
    if (inspected?.workspaceFolderValue !== undefined) {
      await cfg.update(key, value, vscode.ConfigurationTarget.WorkspaceFolder);
    }
    if (inspected?.workspaceValue !== undefined) {
      await cfg.update(key, value, vscode.ConfigurationTarget.Workspace);
    }
    if (inspected?.globalValue !== undefined) {
      await cfg.update(key, value, vscode.ConfigurationTarget.Global);
    }
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
