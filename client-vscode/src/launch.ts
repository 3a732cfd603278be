import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { expandVariables, Interpreter, resolveInterpreter, run } from './interpreter';
import { ImportStrategy, readLaunchSettings } from './settings';

/**
 * How gradguard is run: the copy bundled in the extension (default), the environment's own, or a
 * `gradguard` executable from the `gradguard.path` setting.
 */
export type LaunchKind = 'bundled' | 'environment' | 'path';

export interface Launch {
  kind: LaunchKind;
  /** The executable: a Python, or the `gradguard.path` executable. */
  command: string;
  /** What comes before gradguard's own arguments (`-P launch.py`, `-P -m gradguard`, or nothing). */
  prefix: string[];
  /** The interpreter that runs it (not for `path`). */
  interpreter?: Interpreter;
  pythonVersion?: string;
  /** The gradguard version this launch runs, when known before starting it. */
  gradguardVersion?: string;
  /** A sentence for the logs and the status item: what runs, and why this one. */
  description: string;
  /** Set when this is not what the settings asked for (a fallback): the reason, to show once. */
  fallback?: { level: 'warning' | 'info'; message: string; installInto?: string };
}

export interface LaunchProblem {
  kind: 'noPython' | 'noSupportedPython' | 'noBundle';
  message: string;
  interpreter?: Interpreter;
}

/** What `launch.py --probe` prints. */
interface Probe {
  python: string;
  implementation: string;
  executable: string;
  bundledSupported: boolean;
  bundledVersion: string | null;
  environmentVersion: string | null;
}

interface Manifest {
  gradguardVersion: string;
  target: string;
  pythons: string[];
  wheel: string;
}

/** Pythons tried, in this order, when the selected one cannot run the bundled server (for example 3.8 or PyPy). */
const FALLBACK_PYTHONS =
  process.platform === 'win32' ? ['python3', 'python', 'py'] : ['python3.13', 'python3.12', 'python3.11', 'python3.10', 'python3.9', 'python3'];

export class Bundle {
  readonly dir: string;
  readonly launcher: string;
  readonly manifest: Manifest | undefined;

  constructor(extensionPath: string) {
    this.dir = path.join(extensionPath, 'bundled');
    this.launcher = path.join(this.dir, 'tool', 'launch.py');
    try {
      this.manifest = JSON.parse(fs.readFileSync(path.join(this.dir, 'manifest.json'), 'utf8')) as Manifest;
    } catch {
      this.manifest = undefined; // a development build without `make vsix`
    }
  }

  /** The gradguard wheel inside the extension, for "install into the environment". */
  get wheel(): string | undefined {
    return this.manifest ? path.join(this.dir, this.manifest.wheel) : undefined;
  }

  /**
   * The working directory of every process the extension starts: never the workspace, whose
   * `gradguard/` folder `python -m gradguard` would import on Python 3.9 and 3.10 (no `-P` there). This folder
   * holds nothing but launch.py.
   */
  get safeCwd(): string {
    const tool = path.dirname(this.launcher);
    return fs.existsSync(tool) ? tool : path.dirname(this.dir);
  }
}

/** Environment of every gradguard process: Python's safe-path mode (3.11+; older Pythons ignore it). */
export function processEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONSAFEPATH: '1' };
}

function atLeast311(version: string | undefined): boolean {
  const [major, minor] = (version ?? '').split('.').map(Number);
  return major > 3 || (major === 3 && minor >= 11);
}

async function probe(bundle: Bundle, python: string): Promise<Probe | { error: string; missing: boolean }> {
  if (!fs.existsSync(bundle.launcher)) {
    return { error: `the extension has no bundled launcher (${bundle.launcher})`, missing: false };
  }
  const result = await run(python, [bundle.launcher, '--probe'], { timeoutMs: 30000, cwd: bundle.safeCwd, env: processEnv() });
  if (result.error) {
    return { error: result.error.message, missing: (result.error as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  try {
    return JSON.parse(result.stdout.trim().split(/\r?\n/).pop() ?? '') as Probe;
  } catch {
    const last = result.stderr.trim().split(/\r?\n/).pop() || `exit code ${result.code}`;
    return { error: `${python} could not run the probe: ${last}`, missing: false };
  }
}

function bundledLaunch(bundle: Bundle, interpreter: Interpreter, p: Probe, description: string): Launch {
  return {
    kind: 'bundled',
    command: interpreter.command,
    prefix: [...(atLeast311(p.python) ? ['-P'] : []), bundle.launcher],
    interpreter,
    pythonVersion: p.python,
    gradguardVersion: p.bundledVersion ?? undefined,
    description,
  };
}

/** Finds another Python that can run the bundled server, when the selected one cannot. */
async function fallbackPython(bundle: Bundle, exclude: string, log: vscode.LogOutputChannel): Promise<{ interpreter: Interpreter; probe: Probe } | undefined> {
  for (const candidate of FALLBACK_PYTHONS) {
    if (candidate === exclude) {
      continue;
    }
    const p = await probe(bundle, candidate);
    if ('error' in p) {
      continue;
    }
    if (p.bundledSupported && p.executable !== exclude) {
      return { interpreter: { command: p.executable || candidate, origin: 'PATH' }, probe: p };
    }
    log.info(`Not usable for the bundled server: ${candidate} (Python ${p.python})`);
  }
  return undefined;
}

/**
 * Decides how to run gradguard from the settings: `gradguard.path`, else `gradguard.importStrategy`
 * (`fromEnvironment` falls back to the bundled copy when the environment lacks gradguard), with the
 * interpreter from `resolveInterpreter`. The bundled copy needs a CPython of the bundle's list; when the
 * selected interpreter is another one (3.9, PyPy), a Python from PATH runs it and the user is told.
 */
export async function resolveLaunch(bundle: Bundle, log: vscode.LogOutputChannel): Promise<Launch | LaunchProblem> {
  const settings = readLaunchSettings();
  if (settings.path) {
    const command = expandVariables(settings.path);
    return { kind: 'path', command, prefix: [], description: `the gradguard executable ${command} (gradguard.path)` };
  }
  const interpreter = await resolveInterpreter(settings.interpreter, log);
  const strategy: ImportStrategy = settings.importStrategy;
  const p = await probe(bundle, interpreter.command);
  const supported = bundle.manifest?.pythons.join(', ') ?? '?';
  if (!bundle.manifest) {
    return { kind: 'noBundle', message: 'this build of the extension has no bundled server (build it with `make vsix`)', interpreter };
  }
  if ('error' in p) {
    log.warn(`Interpreter ${interpreter.command} (from ${interpreter.origin}): ${p.error}`);
    const other = await fallbackPython(bundle, interpreter.command, log);
    if (!other) {
      return p.missing
        ? { kind: 'noPython', message: `no Python interpreter at '${interpreter.command}'`, interpreter }
        : { kind: 'noSupportedPython', message: `${interpreter.command} did not run (${p.error})`, interpreter };
    }
    return {
      ...bundledLaunch(bundle, other.interpreter, other.probe, `the bundled gradguard ${other.probe.bundledVersion} run by ${other.interpreter.command} (Python ${other.probe.python})`),
      fallback: {
        level: 'warning',
        message: `gradguard: '${interpreter.command}' could not be started, so the bundled server runs with ${other.interpreter.command} (Python ${other.probe.python}). Hover types then come from that Python's packages.`,
      },
    };
  }
  log.info(`Interpreter ${interpreter.command} (from ${interpreter.origin}): Python ${p.python}, gradguard in the environment: ${p.environmentVersion ?? 'none'}`);

  if (strategy === 'fromEnvironment' && p.environmentVersion) {
    return {
      kind: 'environment',
      command: interpreter.command,
      prefix: [...(atLeast311(p.python) ? ['-P'] : []), '-m', 'gradguard'],
      interpreter,
      pythonVersion: p.python,
      gradguardVersion: p.environmentVersion,
      description: `the environment's gradguard ${p.environmentVersion} in ${interpreter.command} (Python ${p.python}, gradguard.importStrategy fromEnvironment)`,
    };
  }
  const notInstalled =
    strategy === 'fromEnvironment'
      ? `gradguard is not installed in ${interpreter.command}, so the bundled gradguard ${p.bundledVersion} runs instead.`
      : undefined;
  if (p.bundledSupported) {
    const launch = bundledLaunch(bundle, interpreter, p, `the bundled gradguard ${p.bundledVersion} run by ${interpreter.command} (Python ${p.python})`);
    if (notInstalled) {
      launch.fallback = { level: 'warning', message: `gradguard: ${notInstalled}`, installInto: interpreter.command };
    }
    return launch;
  }
  const why = `${interpreter.command} is ${p.implementation} ${p.python}; the bundled server runs on CPython ${supported}`;
  const other = await fallbackPython(bundle, interpreter.command, log);
  if (!other) {
    return { kind: 'noSupportedPython', message: why, interpreter };
  }
  return {
    ...bundledLaunch(bundle, other.interpreter, other.probe, `the bundled gradguard ${other.probe.bundledVersion} run by ${other.interpreter.command} (Python ${other.probe.python})`),
    fallback: {
      level: 'warning',
      message: `gradguard: ${notInstalled ? notInstalled + ' ' : ''}${why}, so ${other.interpreter.command} (Python ${other.probe.python}) runs it. Squiggles are unaffected; hover types come from that Python's packages.`,
    },
  };
}

export function isLaunch(value: Launch | LaunchProblem): value is Launch {
  return value.kind === 'bundled' || value.kind === 'environment' || value.kind === 'path';
}

/** The command and arguments that run `gradguard <args>` with this launch. */
export function gradguardCommand(launch: Launch, args: string[]): { command: string; args: string[] } {
  return { command: launch.command, args: [...launch.prefix, ...args] };
}
