import * as vscode from 'vscode';

const SCHEME = 'gradguard';

/**
 * Read-only Markdown documents (rule docs, traceback explanations) under `gradguard:/...`, shown in
 * the built-in Markdown preview. Nothing is fetched from the network.
 */
export class MarkdownViews implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changeEmitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /** Shows `markdown` as `gradguard:/<folder>/<name>.md` in a preview beside the editor. */
  async show(folder: string, name: string, markdown: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${folder}/${name.replace(/[\\/]/g, '_')}.md` });
    this.contents.set(uri.toString(), markdown);
    this.changeEmitter.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(document, 'markdown');
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
    } catch {
      // the Markdown extension is disabled: show the source instead
      await vscode.window.showTextDocument(document, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.changeEmitter.dispose();
  }
}
