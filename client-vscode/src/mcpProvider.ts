import * as vscode from 'vscode';
import { run } from './interpreter';
import { gradguardCommand, Launch } from './launch';
import { ServerManager } from './server';

/**
 * `gradguard mcp` offered to the editor's agents with no configuration: VS Code 1.101+ through the MCP server
 * definition provider (package.json `contributes.mcpServerDefinitionProviders`), Cursor through
 * `vscode.cursor.mcp.registerServer`. It runs with the launch the language server uses, in the launcher's own
 * folder and in safe-path mode (no workspace code is imported), and is offered only when that Python has the MCP
 * SDK (`gradguard mcp --probe`); the bundled server does not carry it (`pip install 'gradguard[mcp]'`). Both APIs
 * are looked up at run time, and a refusal is logged, never fatal: the extension supports VS Code 1.100, whose
 * provider call wants the contribution under its older name, `modelContextServerCollections` (both are declared).
 */
export const MCP_PROVIDER_ID = 'gradguard.mcp';
const SERVER_NAME = 'gradguard';
const PROBE_TIMEOUT_MS = 30000;
// Replaces nothing in the extension host's environment but this: the server imports no code from its folder.
const MCP_ENV = { PYTHONSAFEPATH: '1' };

interface McpStdioServerDefinitionClass {
  new (label: string, command: string, args?: string[], env?: Record<string, string | number | null>, version?: string): {
    cwd?: vscode.Uri;
  };
}

interface McpServerDefinitionProvider {
  readonly onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): Promise<unknown[]>;
}

interface LanguageModelsWithMcp {
  registerMcpServerDefinitionProvider?(id: string, provider: McpServerDefinitionProvider): vscode.Disposable;
}

interface CursorMcp {
  registerServer(config: { name: string; server: { command: string; args: string[]; env: Record<string, string> } }): void;
  unregisterServer(name: string): void;
}

export interface McpServerCommand {
  command: string;
  args: string[];
  cwd: string;
  version: string;
}

/** The command line of `gradguard mcp` for this launch, each workspace folder a --root (none: the cwd is no project). */
export function mcpServerCommand(launch: Launch, folders: readonly string[], cwd: string, version: string): McpServerCommand {
  const roots = folders.flatMap((f) => ['--root', f]);
  return { ...gradguardCommand(launch, ['mcp', ...roots]), cwd, version };
}

export function registerMcpServer(manager: ServerManager, log: vscode.LogOutputChannel): vscode.Disposable[] {
  const lm = vscode.lm as unknown as LanguageModelsWithMcp;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: McpStdioServerDefinitionClass }).McpStdioServerDefinition;
  const cursor = (vscode as unknown as { cursor?: { mcp?: CursorMcp } }).cursor?.mcp;
  const disposables: vscode.Disposable[] = [];
  const changed = new vscode.EventEmitter<void>();
  disposables.push(changed);

  const current = async (): Promise<McpServerCommand | undefined> => {
    const launch = await manager.currentLaunch();
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    if (!launch || folders.length === 0) {
      return undefined;
    }
    const server = mcpServerCommand(launch, folders, manager.bundle.safeCwd, manager.extensionVersion);
    const probe = await run(server.command, [...server.args.slice(0, server.args.indexOf('mcp') + 1), '--probe'], {
      timeoutMs: PROBE_TIMEOUT_MS,
      cwd: server.cwd,
      env: { ...process.env, ...MCP_ENV },
    });
    if (probe.code !== 0) {
      log.info(`gradguard mcp is not offered to agents: ${(probe.stderr || probe.error?.message || '').trim()}`);
      return undefined;
    }
    return server;
  };

  if (lm.registerMcpServerDefinitionProvider && Definition) {
    // Never fatal: VS Code 1.100 has the call but wants the contribution under its older name (package.json
    // declares both), and a refusal here once failed the whole activation.
    try {
      disposables.push(
        lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
          onDidChangeMcpServerDefinitions: changed.event,
          provideMcpServerDefinitions: async () => {
            const server = await current();
            if (!server) {
              return [];
            }
            log.info(`gradguard mcp offered to agents: ${server.command} ${server.args.join(' ')}`);
            const definition = new Definition(SERVER_NAME, server.command, server.args, MCP_ENV, server.version);
            definition.cwd = vscode.Uri.file(server.cwd);
            return [definition];
          },
        }),
      );
    } catch (err) {
      log.warn(`gradguard mcp is not offered to agents: ${String(err)}`);
    }
  }

  if (cursor) {
    let registered = false;
    const register = async (): Promise<void> => {
      const server = await current();
      if (registered) {
        cursor.unregisterServer(SERVER_NAME);
        registered = false;
      }
      if (server) {
        // Cursor's stdio config has no cwd: the launcher's `-P` and PYTHONSAFEPATH keep workspace code out.
        cursor.registerServer({ name: SERVER_NAME, server: { command: server.command, args: server.args, env: MCP_ENV } });
        registered = true;
        log.info(`gradguard mcp offered to Cursor's agent: ${server.command} ${server.args.join(' ')}`);
      }
    };
    const registerSafely = () => register().catch((err) => log.warn(`gradguard mcp is not offered to Cursor: ${String(err)}`));
    void registerSafely();
    disposables.push({ dispose: () => registered && cursor.unregisterServer(SERVER_NAME) });
    disposables.push(manager.onDidChangeState((state) => state === 'running' && void registerSafely()));
  }
  // A new interpreter or launch setting restarts the server: the definition may have changed with it.
  disposables.push(manager.onDidChangeState((state) => state === 'running' && changed.fire()));
  return disposables;
}
