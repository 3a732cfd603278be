import * as cp from 'child_process';
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';

export interface Interpreter {
  /** Executable to run. */
  command: string;
  /** Where it came from, for the status item and the logs. */
  origin: 'setting' | 'python extension' | 'PATH';
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

/**
 * The Python extension's API, when that extension is installed. Optional: everything works without it.
 */
export async function pythonExtensionApi(): Promise<PythonExtension | undefined> {
  if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
    return undefined;
  }
  try {
    return await PythonExtension.api();
  } catch {
    return undefined;
  }
}

/**
 * Which Python runs the server: the `gradguard.interpreter` setting when the user set one
 * (explicit beats implicit, as in the Python-tools extensions), else the environment selected in
 * the Python extension, else `python3` on PATH. In Restricted Mode the Python extension's choice
 * is skipped, because it is often an environment inside the untrusted workspace.
 */
export async function resolveInterpreter(setting: string, log: vscode.LogOutputChannel): Promise<Interpreter> {
  if (setting) {
    return { command: expandVariables(setting), origin: 'setting' };
  }
  if (vscode.workspace.isTrusted) {
    const api = await pythonExtensionApi();
    if (api) {
      try {
        const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
        const active = api.environments.getActiveEnvironmentPath(resource);
        const resolved = await api.environments.resolveEnvironment(active);
        const executable = resolved?.executable.uri?.fsPath;
        if (executable) {
          return { command: executable, origin: 'python extension' };
        }
      } catch (err) {
        log.warn(`The Python extension did not give an interpreter: ${String(err)}`);
      }
    }
  }
  return { command: 'python3', origin: 'PATH' };
}

export function expandVariables(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const home = process.env.HOME ?? process.env.USERPROFILE ?? '';
  return value
    .replace(/\$\{workspaceFolder\}/g, folder)
    .replace(/\$\{userHome\}/g, home)
    .replace(/^~(?=\/|\\|$)/, home);
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the process could not start at all (for example ENOENT). */
  error?: Error;
}

/** Runs a process to completion, feeding `input` on stdin; never rejects. */
export function run(
  command: string,
  args: string[],
  options: { input?: string; timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (result: ProcessResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(result);
      }
    };
    let child: cp.ChildProcess;
    try {
      child = cp.spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (err) {
      resolve({ code: null, stdout: '', stderr: '', error: err as Error });
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ code: null, stdout, stderr, error: new Error(`timed out after ${options.timeoutMs} ms`) });
    }, options.timeoutMs);
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (error) => finish({ code: null, stdout, stderr, error }));
    child.on('close', (code) => finish({ code, stdout, stderr }));
    child.stdin?.on('error', () => undefined); // the process may exit before reading its stdin
    child.stdin?.end(options.input ?? '');
  });
}

function quote(arg: string): string {
  const safe = process.platform === 'win32' ? /^[\w@%+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/;
  if (safe.test(arg)) {
    return arg;
  }
  return process.platform === 'win32' ? `"${arg.replace(/"/g, '""')}"` : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A command line for the integrated terminal (bash, zsh, fish, PowerShell). */
export function terminalCommandLine(command: string, args: string[]): string {
  const line = [command, ...args].map(quote).join(' ');
  // PowerShell runs a quoted executable only through the call operator.
  return process.platform === 'win32' && quote(command) !== command ? `& ${line}` : line;
}
