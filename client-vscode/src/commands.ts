import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';
import { run, terminalCommandLine } from './interpreter';
import { gradguardCommand, Launch, processEnv } from './launch';
import { MarkdownViews } from './markdown';
import { ServerManager } from './server';

/** Runs `gradguard <args>` the way the server runs (bundled, environment or gradguard.path), off the workspace. */
type GradguardRunner = (args: string[], options: { input?: string; timeoutMs: number }) => ReturnType<typeof run>;

const FIX_ALL = vscode.CodeActionKind.SourceFixAll.append('gradguard');
const CODE_PATTERN = /^GG\d+$/i;

export function registerCommands(manager: ServerManager, views: MarkdownViews, log: vscode.LogOutputChannel): vscode.Disposable[] {
  const gradguard: GradguardRunner = async (args, options) => {
    const launch = await manager.currentLaunch();
    if (!launch) {
      return { code: null, stdout: '', stderr: '', error: new Error(manager.problem ?? 'no Python can run gradguard (see the logs)') };
    }
    const { command, args: full } = gradguardCommand(launch, args);
    return run(command, full, { ...options, cwd: manager.bundle.safeCwd, env: processEnv() });
  };

  return [
    vscode.commands.registerCommand('gradguard.restart', () => manager.restart('gradguard.restart command')),
    vscode.commands.registerCommand('gradguard.showLogs', () => log.show()),
    vscode.commands.registerCommand('gradguard.fixAll', () => fixAll()),
    vscode.commands.registerCommand('gradguard.fixAllUnsafe', () => fixAllUnsafe(manager, log)),
    vscode.commands.registerCommand('gradguard.showRuleDocs', (code?: unknown) => showRuleDocs(manager, views, log, gradguard, code)),
    vscode.commands.registerCommand('gradguard.explainTraceback', () => explainTraceback(views, log, gradguard)),
    vscode.commands.registerCommand('gradguard.runTrace', (uri?: unknown) => runTrace(() => manager.currentLaunch(), uri)),
  ];
}

/** Applies the server's `source.fixAll.gradguard` action to the active document. */
async function fixAll(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('gradguard: open a Python file first.');
    return;
  }
  const document = editor.document;
  const whole = new vscode.Range(0, 0, document.lineCount, 0);
  // The last argument resolves the (lazily resolved) edit of the first action.
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>('vscode.executeCodeActionProvider', document.uri, whole, FIX_ALL.value, 1)) ?? [];
  const action = actions.find((a) => a.kind && FIX_ALL.contains(a.kind));
  if (!action || (!action.edit && !action.command)) {
    void vscode.window.setStatusBarMessage('gradguard: nothing to fix', 3000);
    return;
  }
  if (action.edit && !(await vscode.workspace.applyEdit(action.edit))) {
    void vscode.window.showWarningMessage('gradguard: the fixes could not be applied (the file changed meanwhile?).');
    return;
  }
  if (action.command) {
    await vscode.commands.executeCommand(action.command.command, ...(action.command.arguments ?? []));
  }
}

/**
 * Applies every fix, unsafe ones included, after the user confirms: an unsafe fix may change what the program
 * computes (its title says why), so neither fix-all nor fix-on-save ever applies one.
 */
async function fixAllUnsafe(manager: ServerManager, log: vscode.LogOutputChannel): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const client = manager.client;
  if (!editor || editor.document.languageId !== 'python' || client?.state !== State.Running) {
    void vscode.window.showInformationMessage('gradguard: open a Python file with the server running first.');
    return;
  }
  const unsafe = vscode.languages
    .getDiagnostics(editor.document.uri)
    .filter((d) => d.source === 'gradguard').length;
  const choice = await vscode.window.showWarningMessage(
    'Apply every gradguard fix in this file, unsafe ones included? An unsafe fix can change what the program computes; each one says why in its quick-fix title.',
    { modal: true, detail: `${unsafe} gradguard problem(s) in ${vscode.workspace.asRelativePath(editor.document.uri)}` },
    'Apply All',
  );
  if (choice !== 'Apply All') {
    return;
  }
  try {
    const result = (await client.sendRequest(ExecuteCommandRequest.type, {
      command: 'gradguard.applyFixAllUnsafe',
      arguments: [editor.document.uri.toString()],
    })) as { applied?: boolean; edits?: number } | null;
    if (!result?.edits) {
      void vscode.window.setStatusBarMessage('gradguard: nothing to fix', 3000);
    }
  } catch (err) {
    log.error(`gradguard.applyFixAllUnsafe: ${String(err)}`);
  }
}

/** Opens a rule's docs (Markdown from the server's `gradguard.ruleDocs` command, else from the CLI). */
async function showRuleDocs(
  manager: ServerManager,
  views: MarkdownViews,
  log: vscode.LogOutputChannel,
  gradguard: GradguardRunner,
  argument: unknown,
): Promise<void> {
  const code = typeof argument === 'string' && argument ? argument : await pickRuleCode();
  if (!code) {
    return;
  }
  let markdown: string | undefined;
  const client = manager.client;
  if (client?.state === State.Running) {
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, { command: 'gradguard.ruleDocs', arguments: [code] });
      markdown = markdownFrom(result);
    } catch (err) {
      log.warn(`gradguard.ruleDocs ${code}: ${String(err)}`);
    }
  }
  if (!markdown) {
    // No server (yet): the CLI prints the same docs.
    const result = await gradguard(['rule', code], { timeoutMs: 30000 });
    if (result.code === 0 && result.stdout.trim()) {
      markdown = result.stdout;
    } else {
      log.error(`gradguard rule ${code}: ${result.error?.message ?? result.stderr}`);
    }
  }
  if (!markdown) {
    void vscode.window.showWarningMessage(`gradguard: no documentation found for ${code}.`);
    return;
  }
  await views.show('rules', code.toUpperCase(), markdown);
}

function markdownFrom(result: unknown): string | undefined {
  if (typeof result === 'string') {
    return result;
  }
  if (result && typeof result === 'object') {
    for (const key of ['markdown', 'value', 'contents', 'docs']) {
      const value = (result as Record<string, unknown>)[key];
      if (typeof value === 'string') {
        return value;
      }
    }
  }
  return undefined;
}

/** The code under the cursor, else a pick among the file's gradguard codes, else typed in. */
async function pickRuleCode(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  const codes = new Set<string>();
  if (editor) {
    const diagnostics = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.source === 'gradguard');
    const codeOf = (d: vscode.Diagnostic) => String(typeof d.code === 'object' ? d.code.value : d.code ?? '');
    const here = diagnostics.filter((d) => d.range.contains(editor.selection.active)).map(codeOf).filter(Boolean);
    if (here.length === 1) {
      return here[0];
    }
    diagnostics.map(codeOf).filter(Boolean).forEach((c) => codes.add(c));
  }
  if (codes.size > 0) {
    return vscode.window.showQuickPick([...codes].sort(), { title: 'gradguard: rule documentation', placeHolder: 'Rule code' });
  }
  const typed = await vscode.window.showInputBox({
    title: 'gradguard: rule documentation',
    prompt: 'Rule code',
    placeHolder: 'GG101',
    validateInput: (v) => (CODE_PATTERN.test(v.trim()) ? undefined : 'A gradguard code looks like GG101'),
  });
  return typed?.trim().toUpperCase();
}

/** Explains a pasted PyTorch traceback (selection, else clipboard) with `gradguard explain -`. */
async function explainTraceback(views: MarkdownViews, log: vscode.LogOutputChannel, gradguard: GradguardRunner): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  let text = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : '';
  if (!text.trim()) {
    text = await vscode.env.clipboard.readText();
  }
  if (!text.trim()) {
    void vscode.window.showInformationMessage('gradguard: select a traceback or copy it to the clipboard, then run this again.');
    return;
  }
  const lang = explainLanguage();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'gradguard: explaining the traceback…' },
    async () => {
      const explain = (format: string) =>
        gradguard(['explain', '--format', format, '--lang', lang, '-'], { input: text, timeoutMs: 60000 });
      // Markdown when this gradguard can print it; else its text report, fenced.
      const markdown = await explain('markdown');
      if (markdown.code !== 2 || !/invalid choice/.test(markdown.stderr)) {
        return markdown;
      }
      const plain = await explain('text');
      return plain.stdout.trim() ? { ...plain, stdout: '# gradguard explain\n\n```text\n' + plain.stdout.trimEnd() + '\n```\n' } : plain;
    },
  );
  if (!result.stdout.trim()) {
    const reason = result.error?.message ?? (result.stderr.trim().split(/\r?\n/).pop() || `exit code ${result.code}`);
    log.error(`gradguard explain failed: ${result.error?.message ?? ''}\n${result.stderr}`);
    const choice = await vscode.window.showErrorMessage(`gradguard explain failed: ${reason}`, 'Show Logs');
    if (choice) {
      log.show();
    }
    return;
  }
  await views.show('explain', 'traceback', result.stdout);
}

function explainLanguage(): 'en' | 'zh' {
  const setting = vscode.workspace.getConfiguration('gradguard').get<string>('language', 'auto');
  if (setting === 'en' || setting === 'zh') {
    return setting;
  }
  return vscode.env.language.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** "Run with gradguard trace": runs the file under the runtime tracer in a terminal (trusted workspaces only). */
async function runTrace(launch: () => Promise<Launch | undefined>, argument: unknown): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage('gradguard: running a script needs a trusted workspace.');
    return;
  }
  const uri = argument instanceof vscode.Uri ? argument : vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== 'file') {
    void vscode.window.showInformationMessage('gradguard: open a saved Python file to run it with the tracer.');
    return;
  }
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open?.isDirty) {
    await open.save();
  }
  const how = await launch();
  if (!how) {
    void vscode.window.showWarningMessage('gradguard: no Python can run gradguard (see gradguard: Show Logs).');
    return;
  }
  // The script runs in its folder, as `python script.py` would; gradguard itself is the bundled or the
  // environment's copy (safe-path mode: the workspace's files do not shadow it).
  const folder = vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath;
  const terminal = vscode.window.createTerminal({ name: 'gradguard trace', cwd: folder, env: { PYTHONSAFEPATH: '1' } });
  terminal.show();
  const { command, args } = gradguardCommand(how, ['trace', uri.fsPath]);
  terminal.sendText(terminalCommandLine(command, args));
}
