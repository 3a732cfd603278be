import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';
import { ServerManager } from './server';

/**
 * The Language Model Tools agent mode calls (package.json `languageModelTools`). Each is one request to the
 * running language server (`gradguard.agentCheck`, `gradguard.agentExplain`), which answers with the text
 * `gradguard mcp` gives: the client only finds the document and opens it, so the server sees the unsaved text.
 * A folder or a list of paths (`gradguard.agentCheckPaths`) is checked as saved on disk, with the CLI's check.
 */
interface CheckInput {
  path?: string;
  paths?: string[];
}

interface ExplainInput {
  traceback: string;
}

const CHECKED_SUFFIXES = ['.py', '.pyi', '.ipynb'];
const MAX_FILE_BYTES = 10 * 1024 * 1024; // the CLI's default --max-file-bytes
const SERVER_WAIT_MS = 30000;

export function registerLanguageModelTools(manager: ServerManager): vscode.Disposable[] {
  return [
    vscode.lm.registerTool<CheckInput>('gradguard_check', {
      prepareInvocation: (options) => ({
        invocationMessage: `Checking ${options.input.paths?.join(', ') || options.input.path || 'the active editor'} with gradguard`,
      }),
      invoke: async (options, token) => {
        const { path: one, paths } = options.input;
        if (paths !== undefined || (one && (await isFolder(one)))) {
          const checked = await Promise.all((paths ?? [one as string]).map((p) => insideWorkspace(p, true)));
          return textResult(await serverCommand(manager, 'gradguard.agentCheckPaths', [{ paths: checked }], token));
        }
        const uri = await checkTarget(one);
        await openForServer(uri);
        const answer = await serverCommand(manager, 'gradguard.agentCheck', [uri.toString()], token);
        return textResult(answer);
      },
    }),
    vscode.lm.registerTool<ExplainInput>('gradguard_explain', {
      prepareInvocation: () => ({ invocationMessage: 'Explaining the traceback with gradguard' }),
      invoke: async (options, token) => {
        const traceback = options.input.traceback ?? '';
        if (!traceback.trim()) {
          throw new Error('Pass the traceback or error message as `traceback`.');
        }
        return textResult(await serverCommand(manager, 'gradguard.agentExplain', [traceback], token));
      },
    }),
  ];
}

/**
 * The document to check: `path` (inside a workspace folder; relative to the first one) or the active editor.
 * A model chooses the path, so only regular files of a checked kind and size inside the workspace are opened.
 */
async function checkTarget(requested: string | undefined): Promise<vscode.Uri> {
  if (!requested) {
    const editor = vscode.window.activeTextEditor;
    const notebook = vscode.window.activeNotebookEditor?.notebook;
    if (notebook && (!editor || editor.document.uri.scheme === 'vscode-notebook-cell')) {
      return notebook.uri; // the server checks a notebook whole (a bug can span cells)
    }
    const document = editor?.document;
    if (!document || document.languageId !== 'python') {
      throw new Error('No Python file is open in the active editor; pass `path`.');
    }
    return document.uri;
  }
  const real = await insideWorkspace(requested, false);
  const stat = await fs.promises.stat(real);
  if (!stat.isFile()) {
    throw new Error(`${requested}: not a regular file; not checked.`);
  }
  if (stat.size > MAX_FILE_BYTES) {
    throw new Error(`${requested}: file is ${stat.size} bytes, above the limit of ${MAX_FILE_BYTES}; not checked.`);
  }
  return vscode.Uri.file(real);
}

function workspaceFolders(): readonly vscode.WorkspaceFolder[] {
  const folders = vscode.workspace.workspaceFolders?.filter((f) => f.uri.scheme === 'file') ?? [];
  if (folders.length === 0) {
    throw new Error('No workspace folder is open: gradguard checks files inside one.');
  }
  return folders;
}

async function isFolder(requested: string): Promise<boolean> {
  const folders = workspaceFolders();
  const absolute = path.isAbsolute(requested) ? requested : path.join(folders[0].uri.fsPath, requested);
  return fs.promises.stat(absolute).then((s) => s.isDirectory(), () => false);
}

/**
 * The real path of `requested` (relative to the first workspace folder) if it lies inside a workspace folder and
 * names a Python file or notebook (or a folder, when `folders`); a model chooses it, so anything else is refused.
 * The server checks the same again.
 */
async function insideWorkspace(requested: string, folders: boolean): Promise<string> {
  if (typeof requested !== 'string' || !requested) {
    throw new Error('A path must be a non-empty file or folder path.');
  }
  const workspace = workspaceFolders();
  const absolute = path.isAbsolute(requested) ? requested : path.join(workspace[0].uri.fsPath, requested);
  let real: string;
  let stat: fs.Stats;
  try {
    real = await fs.promises.realpath(absolute);
    stat = await fs.promises.stat(real);
  } catch (err) {
    throw new Error(`${requested}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}.`);
  }
  if (!(folders && stat.isDirectory()) && !CHECKED_SUFFIXES.some((s) => real.endsWith(s))) {
    const kinds = folders ? ' or a folder' : '';
    throw new Error(`${requested}: not a Python file or notebook (.py, .pyi, .ipynb)${kinds}; not checked.`);
  }
  const roots = await Promise.all(workspace.map((f) => fs.promises.realpath(f.uri.fsPath).catch(() => f.uri.fsPath)));
  if (!roots.some((root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep))) {
    throw new Error(`${requested}: outside the workspace folders; not checked.`);
  }
  return real;
}

/** Opens the document (without showing it) so that the server has its text; an open one is left as it is. */
async function openForServer(uri: vscode.Uri): Promise<void> {
  if (uri.path.endsWith('.ipynb')) {
    await vscode.workspace.openNotebookDocument(uri);
  } else {
    await vscode.workspace.openTextDocument(uri);
  }
}

async function serverCommand(manager: ServerManager, command: string, args: unknown[], token: vscode.CancellationToken): Promise<unknown> {
  // A tool call can be what activated the extension: the server is then about to start.
  const settled = (state: string) => state === 'running' || state === 'disabled' || state === 'notInstalled' || state === 'failed';
  if (!settled(manager.state)) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, SERVER_WAIT_MS);
      const listener = manager.onDidChangeState((state) => settled(state) && done());
      function done(): void {
        clearTimeout(timer);
        listener.dispose();
        resolve();
      }
    });
  }
  const client = manager.client;
  if (!client || client.state !== State.Running) {
    throw new Error(`gradguard's language server is not running (${manager.problem ?? manager.state}).`);
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token);
}

function textResult(answer: unknown): vscode.LanguageModelToolResult {
  const { text, error } = (answer ?? {}) as { text?: unknown; error?: unknown };
  if (typeof error === 'string' && error) {
    throw new Error(error);
  }
  if (typeof text !== 'string') {
    throw new Error('gradguard: this server version has no answer for this tool (update gradguard).');
  }
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}
