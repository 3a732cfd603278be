// Test-only extension for tests/e2e/vscode_e2e.js: another extension calling gradguard's Language Model Tools
// through vscode.lm.invokeTool, as Copilot's agent mode does (its names avoid the word gradguard: the e2e finds
// the gradguard extension in the Extensions view by that word). The driver writes the calls to make to
// $GRADGUARD_E2E_LM_DIR/request.json ([{tool, input}]) and runs the command; the answers go to response.json.
'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(vscode.commands.registerCommand('lmToolsProbe.invokeTools', async () => {
    const dir = process.env.GRADGUARD_E2E_LM_DIR;
    const calls = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8'));
    const tools = vscode.lm.tools.filter((t) => t.name.startsWith('gradguard_'))
      .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, tags: t.tags }));
    const results = [];
    for (const call of calls) {
      const source = new vscode.CancellationTokenSource();
      try {
        const result = await vscode.lm.invokeTool(call.tool, { input: call.input, toolInvocationToken: undefined }, source.token);
        const parts = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? { text: p.value } : { other: String(p) }));
        results.push({ ...call, parts });
      } catch (err) {
        results.push({ ...call, error: String((err && err.message) || err) });
      } finally {
        source.dispose();
      }
    }
    const out = path.join(dir, 'response.json');
    fs.writeFileSync(out + '.tmp', JSON.stringify({ tools, results }, null, 2));
    fs.renameSync(out + '.tmp', out); // the driver polls for the file: it must appear whole
  }));
}

module.exports = { activate };
