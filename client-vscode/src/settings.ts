import * as vscode from 'vscode';

export const SECTION = 'gradguard';

/** Settings the server reads (sent as `initializationOptions.settings` and `didChangeConfiguration`). */
export interface ServerSettings {
  enable: boolean;
  /** null: no override, so `[tool.gradguard]` in pyproject.toml (or the defaults) decides. */
  select: string[] | null;
  ignore: string[] | null;
  severity: Record<string, Severity>;
  language: 'auto' | 'en' | 'zh';
  debounceMs: number;
  /** Restricted Mode: the server must not run workspace code or spawn helpers (jedi) from it. */
  workspaceTrusted: boolean;
  /** onType: analyse the unsaved buffer as it changes; onSave: on open and save only. */
  lint: { run: LintRun };
}

export type LintRun = 'onType' | 'onSave';
export type ImportStrategy = 'useBundled' | 'fromEnvironment';
export type ShowNotifications = 'off' | 'onError' | 'onWarning' | 'always';

export type Severity = 'error' | 'warning' | 'information' | 'hint';

/** Settings only the client uses: a change to one of them restarts the server. */
export interface LaunchSettings {
  enable: boolean;
  interpreter: string;
  args: string[];
  importStrategy: ImportStrategy;
  /** A `gradguard` executable (for example from pipx); empty: run gradguard with the interpreter. */
  path: string;
}

const SEVERITIES: readonly string[] = ['error', 'warning', 'information', 'hint'];

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function nonEmpty(list: string[]): string[] | null {
  return list.length > 0 ? list : null;
}

export function readServerSettings(): ServerSettings {
  const cfg = config();
  const severity: Record<string, Severity> = {};
  for (const [code, level] of Object.entries(cfg.get<Record<string, unknown>>('severity') ?? {})) {
    if (typeof level === 'string' && SEVERITIES.includes(level)) {
      severity[code] = level as Severity;
    }
  }
  const language = cfg.get<string>('language', 'auto');
  return {
    enable: cfg.get<boolean>('enable', true),
    select: nonEmpty(stringList(cfg.get('select'))),
    ignore: nonEmpty(stringList(cfg.get('ignore'))),
    severity,
    language: language === 'en' || language === 'zh' ? language : 'auto',
    debounceMs: Math.max(0, Math.min(5000, cfg.get<number>('debounceMs', 50))),
    workspaceTrusted: vscode.workspace.isTrusted,
    lint: { run: cfg.get<string>('lint.run') === 'onSave' ? 'onSave' : 'onType' },
  };
}

export function readShowNotifications(): ShowNotifications {
  const value = config().get<string>('showNotifications', 'onWarning');
  return value === 'off' || value === 'onError' || value === 'always' ? value : 'onWarning';
}

export function readLaunchSettings(): LaunchSettings {
  const cfg = config();
  // In Restricted Mode VS Code itself drops workspace values of `interpreter` and `args`
  // (they are listed in `restrictedConfigurations`), so these are user-level values there.
  return {
    enable: cfg.get<boolean>('enable', true),
    interpreter: (cfg.get<string>('interpreter') ?? '').trim(),
    args: stringList(cfg.get('args')),
    importStrategy: cfg.get<string>('importStrategy') === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled',
    path: (cfg.get<string>('path') ?? '').trim(),
  };
}

export const LAUNCH_KEYS = ['enable', 'interpreter', 'args', 'importStrategy', 'path'];

/** A change to these restarts the server; other `gradguard.*` changes are sent to the running one. */
export function affectsLaunch(e: vscode.ConfigurationChangeEvent): boolean {
  return LAUNCH_KEYS.some((key) => e.affectsConfiguration(`${SECTION}.${key}`));
}

/**
 * The severity the user asked for, by the longest matching code prefix (`GG4` matches `GG401`).
 * The server applies the same map; doing it here as well keeps the setting working with a server
 * that predates it.
 */
export function severityFor(code: string, map: Record<string, Severity>): vscode.DiagnosticSeverity | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(map)) {
    if (code.startsWith(prefix) && (best === undefined || prefix.length > best.length)) {
      best = prefix;
    }
  }
  if (best === undefined) {
    return undefined;
  }
  return {
    error: vscode.DiagnosticSeverity.Error,
    warning: vscode.DiagnosticSeverity.Warning,
    information: vscode.DiagnosticSeverity.Information,
    hint: vscode.DiagnosticSeverity.Hint,
  }[map[best]];
}
