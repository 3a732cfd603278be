#!/usr/bin/env node
// End-to-end test of the gradguard VS Code extension and language server inside a real VS Code
// (code-server 4.100.3), driven by Debian's headless Chromium through playwright-core.
// Recipe and pitfalls: ../shared/real-client/README.md. Run through `make e2e` (tests/e2e/run.sh).
//
// Environment:
//   CODE_SERVER  code-server launcher (required)
//   VSIX         the extension package to install (required)
//   PYTHON       interpreter WITHOUT gradguard (a fresh venv), written into gradguard.interpreter: the squiggles
//                come from the server bundled in the .vsix (required)
//   ENV_PYTHON   interpreter WITH gradguard installed, for the importStrategy fromEnvironment step (required)
//   OLDEST_PYTHON  a venv of the oldest CPython the bundle claims (3.9), without gradguard (required)
//   WORK         scratch folder, wiped first (default: tests/e2e/artifacts/vscode-work)
//   SHOTS        screenshot folder (default: tests/e2e/artifacts)
//   README_SHOT  where to copy the hover screenshot for the README (optional)
//   PORT         port on 127.0.0.1 (default: a free one)
//   CHROMIUM     browser binary (default /usr/bin/chromium)
//   E2E_UNTIL    stop (passing) after this MARK, to run the first steps only (e.g. languageModelTools)
// Prints one `RESULT {json}` line; the exit code is 0 only when every assertion held.
'use strict';
const { chromium } = require('playwright-core');
const { spawn, spawnSync, execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const http = require('http');
const net = require('net');

const HERE = __dirname;
const CODE_SERVER = process.env.CODE_SERVER;
const VSIX = process.env.VSIX;
const PYTHON = process.env.PYTHON;
const WORK = path.resolve(process.env.WORK || path.join(HERE, 'artifacts', 'vscode-work'));
const SHOTS = path.resolve(process.env.SHOTS || path.join(HERE, 'artifacts'));
const README_SHOT = process.env.README_SHOT ? path.resolve(process.env.README_SHOT) : '';
let PORT = Number(process.env.PORT || 0); // 0: pick a free port
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ENV_PYTHON = process.env.ENV_PYTHON;
const OLDEST_PYTHON = process.env.OLDEST_PYTHON;

// On a busy 2-core machine the extension host starts 10-20 s after the page; be generous.
const LONG = 90000;
const MEDIUM = 30000;

const T0 = Date.now();
const log = (m) => console.log(`[vscode-e2e ${String(Date.now() - T0).padStart(6)}ms] ${m}`);
const timings = {};
/** Thrown by mark() at the E2E_UNTIL mark: the run ends there, passing. */
class UntilReached extends Error {}
const mark = (k) => {
  timings[k] = Date.now() - T0;
  log(`MARK ${k}`);
  if (k === process.env.E2E_UNTIL) throw new UntilReached(k);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

function httpOk(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => { res.resume(); resolve(res.statusCode < 500); });
    req.on('error', () => resolve(false));
    req.setTimeout(2000, () => { req.destroy(); resolve(false); });
  });
}

async function waitFor(fn, timeoutMs, what, stepMs = 100) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timeout (${timeoutMs} ms) waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** Retries a UI step that is known to be flaky on a loaded machine (hover, menus), then gives up. */
async function retry(what, attempts, fn) {
  for (let i = 1; ; i++) {
    try {
      return await fn(i);
    } catch (err) {
      if (i >= attempts) throw err;
      log(`retrying ${what} (attempt ${i} failed: ${String(err.message || err).split('\n')[0]})`);
    }
  }
}

function check(condition, message) {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

function readTrace(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

async function main() {
  if (!CODE_SERVER || !VSIX || !PYTHON || !ENV_PYTHON || !OLDEST_PYTHON) throw new Error('set CODE_SERVER, VSIX, PYTHON, ENV_PYTHON and OLDEST_PYTHON');
  for (const bare of [PYTHON, OLDEST_PYTHON]) {
    check(spawnSync(bare, ['-c', 'import gradguard'], { cwd: '/' }).status !== 0, `${bare} has no gradguard (the bundled server must do the work)`);
  }
  fs.rmSync(WORK, { recursive: true, force: true });
  const ud = path.join(WORK, 'user-data');
  const exts = path.join(WORK, 'extensions');
  const ws = path.join(WORK, 'workspace');
  const profile = path.join(WORK, 'chromium-profile');
  const home = path.join(WORK, 'home');
  const traceFile = path.join(WORK, 'client-trace.jsonl');
  const lmDir = path.join(WORK, 'lm-tools');
  for (const d of [ud, path.join(ud, 'User'), exts, ws, profile, home, SHOTS, lmDir]) fs.mkdirSync(d, { recursive: true });
  // The workspace: the product's three headline programs (examples/, as `make demo` checks them) and a traceback.
  const examples = path.join(HERE, '..', '..', 'examples');
  for (const f of fs.readdirSync(examples).filter((name) => name.endsWith('.py'))) {
    fs.copyFileSync(path.join(examples, f), path.join(ws, f));
  }
  for (const f of fs.readdirSync(path.join(HERE, 'fixtures'))) {
    fs.copyFileSync(path.join(HERE, 'fixtures', f), path.join(ws, f));
  }
  // A file no editor opens, for the Language Model Tools (GG202's first bad example), and one outside the workspace.
  fs.copyFileSync(path.join(HERE, '..', '..', 'server', 'gradguard', 'rules', 'examples', 'GG202', 'bad_1_sequential_sigmoid_relu.py'),
    path.join(ws, 'sigmoid_relu.py'));
  fs.copyFileSync(path.join(ws, 'sigmoid_relu.py'), path.join(WORK, 'outside.py'));
  // A notebook whose bug spans two code cells (no markdown cell: how those count is the cell-number check's business).
  const nbCell = (cell_type, source) => ({ cell_type, metadata: {}, source, ...(cell_type === 'code' ? { execution_count: null, outputs: [] } : {}) });
  fs.writeFileSync(path.join(ws, 'split_cells.ipynb'), JSON.stringify({
    cells: [nbCell('code', ['import torch\n', 'w = torch.rand(4, requires_grad=True)\n']), nbCell('code', ['w += 1\n'])],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }, language_info: { name: 'python' } },
    nbformat: 4, nbformat_minor: 5 }, null, 1));
  // A notebook with markdown cells between its code cells: VS Code numbers every cell, and so must gradguard.
  fs.writeFileSync(path.join(ws, 'cell_numbers.ipynb'), JSON.stringify({
    cells: [nbCell('markdown', ['# Cell numbers\n']), nbCell('code', ['import torch\n', 'w = torch.rand(4, requires_grad=True)\n']),
      nbCell('markdown', ['The bug, two cells later:\n']), nbCell('code', ['w += 1\n'])],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }, language_info: { name: 'python' } },
    nbformat: 4, nbformat_minor: 5 }, null, 1));
  // Like a cloned repository that ships its own `gradguard/` package at the root: importing it writes a marker.
  // Nothing the extension starts (server, explain, rule docs, probes) may import it.
  const marker = path.join(WORK, 'hostile-marker.txt');
  fs.mkdirSync(path.join(ws, 'gradguard'));
  const payload = `open(${JSON.stringify(marker)}, 'a').write('workspace gradguard/ imported\\n')\n`;
  fs.writeFileSync(path.join(ws, 'gradguard', '__init__.py'), payload);
  fs.writeFileSync(path.join(ws, 'gradguard', '__main__.py'), payload);
  // Positive control: `python -m gradguard` started in the workspace does import it.
  spawnSync(ENV_PYTHON, ['-m', 'gradguard', '--version'], { cwd: ws });
  check(fs.existsSync(marker), 'control: `python -m gradguard` in the workspace imports its gradguard/ package');
  fs.rmSync(marker);
  // Nothing may land in the real $HOME: code-server writes ~/.config/code-server/config.yaml and a
  // device id, Chromium writes ~/.config/chromium. The trace variable reaches the extension host.
  const env = Object.assign({}, process.env, {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    GRADGUARD_CLIENT_TRACE_FILE: traceFile,
    GRADGUARD_E2E_LM_DIR: lmDir,
  });
  fs.writeFileSync(path.join(ud, 'User', 'settings.json'), JSON.stringify({
    'gradguard.interpreter': PYTHON,
    'gradguard.trace.server': 'messages',
    'editor.codeActionsOnSave': { 'source.fixAll.gradguard': 'explicit' },
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'chat.commandCenter.enabled': false,
    'editor.hover.delay': 150,
    'editor.minimap.enabled': false,
    'editor.fontSize': 15,
    'files.autoSave': 'off',
    'files.insertFinalNewline': false,
    'files.trimTrailingWhitespace': false,
  }, null, 2));

  if (!PORT) PORT = await freePort();
  const common = ['--config', path.join(WORK, 'code-server.yaml'), '--user-data-dir', ud, '--extensions-dir', exts];
  const tInstall = Date.now();
  const out = execFileSync(CODE_SERVER, [...common, '--install-extension', VSIX], { encoding: 'utf8', env });
  log(`install-extension (${Date.now() - tInstall} ms): ${out.trim().split('\n').pop()}`);
  check(/successfully installed/i.test(out), 'the .vsix installed');
  // Beside it, a test-only extension that calls gradguard's Language Model Tools as an agent would (lm-tools-probe/).
  const probeDir = path.join(WORK, 'lm-tools-probe');
  fs.cpSync(path.join(HERE, 'lm-tools-probe'), probeDir, { recursive: true });
  const vsce = path.join(HERE, '..', '..', 'client-vscode', 'node_modules', '.bin', 'vsce');
  execFileSync(vsce, ['package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', path.join(WORK, 'lm-tools-probe.vsix')],
    { cwd: probeDir, encoding: 'utf8' });
  const probeOut = execFileSync(CODE_SERVER, [...common, '--install-extension', path.join(WORK, 'lm-tools-probe.vsix')], { encoding: 'utf8', env });
  check(/successfully installed/i.test(probeOut), 'the Language Model Tools probe installed');

  const cs = spawn(CODE_SERVER, [...common, '--bind-addr', `127.0.0.1:${PORT}`, '--auth', 'none',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--disable-getting-started-override', ws], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
  const csLog = fs.createWriteStream(path.join(WORK, 'code-server.log'));
  cs.stdout.pipe(csLog);
  cs.stderr.pipe(csLog);
  log(`code-server pid=${cs.pid}`);

  let browser;
  let page;
  const shot = async (name) => {
    const p = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: p });
    log(`screenshot ${path.relative(process.cwd(), p)}`);
    return p;
  };
  try {
    await waitFor(() => httpOk(`http://127.0.0.1:${PORT}/healthz`), LONG, 'code-server /healthz', 250);
    mark('codeServerUp');
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      viewport: { width: 1280, height: 800 },
      env,
    });
    page = browser.pages()[0] || (await browser.newPage());
    page.setDefaultTimeout(MEDIUM);
    await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(ws)}`);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: LONG });
    await explorerRow(page, 'leaf_inplace.py').waitFor({ state: 'visible', timeout: LONG });
    mark('workbenchReady');
    await shot('01-workbench');

    // ---- program 1: a leaf written in place ------------------------------------------------------
    const leaf = path.join(ws, 'leaf_inplace.py');
    const editor1 = await openFile(page, 'leaf_inplace.py', 'w += 1');
    mark('program1Opened');
    const squiggle1 = await squiggleOnLine(editor1, 'w += 1', LONG);
    mark('firstSquiggle');
    await shot('02-squiggle');
    const trace = readTrace(traceFile);
    const activate = trace.find((e) => e.event === 'activate');
    const starting = trace.find((e) => e.event === 'serverStarting');
    const ready = trace.find((e) => e.event === 'clientReady');
    const firstDiag = trace.find((e) => e.event === 'firstDiagnostics');
    check(activate && starting && ready, `the extension activated and started the server (trace: ${JSON.stringify(trace)})`);
    timings.serverStartToClientReadyMs = ready.t - starting.t;
    timings.serverStartToFirstDiagnosticsMs = firstDiag ? firstDiag.t - starting.t : null;
    timings.serverStartToFirstSquiggleMs = T0 + timings.firstSquiggle - starting.t;
    log(`server start -> first squiggle: ${timings.serverStartToFirstSquiggleMs} ms`);
    log(`server started as: ${starting.description} (${starting.python} ${starting.args.join(' ')})`);
    check(starting.kind === 'bundled' && starting.python === PYTHON, `the bundled server ran with the gradguard-less ${PYTHON}`);
    check(starting.args.includes('-P') && starting.args.some((a) => a.endsWith(path.join('bundled', 'tool', 'launch.py'))),
      'the server was started with -P through the bundled launcher');
    check(ready.serverVersion === '0.1.0' || ready.serverVersion === JSON.parse(fs.readFileSync(path.join(HERE, '..', '..', 'client-vscode', 'package.json'))).version,
      `the server reported its version at initialize (${ready.serverVersion})`);
    mark('bundledServerSquiggle');

    const problems1 = await problemsFor(page, 'leaf_inplace.py');
    log(`problems in leaf_inplace.py: ${JSON.stringify(problems1)}`);
    check(problems1.some((p) => p.code === 'GG101' && p.line === 3), 'GG101 reported on line 3 of program 1');

    const hoverText = await retry('hover', 3, async () => {
      const box = await squiggle1.boundingBox();
      await page.mouse.move(10, 10);
      await page.mouse.move(box.x + Math.min(box.width / 2, 12), box.y + box.height / 2, { steps: 3 });
      const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: /leaf/i }).first();
      await hover.waitFor({ state: 'visible', timeout: 15000 });
      await sleep(300); // let the LSP hover part render next to the diagnostic part
      return hover.innerText();
    });
    log(`hover text: ${JSON.stringify(hoverText)}`);
    check(/leaf/i.test(hoverText), 'the hover explains the leaf');
    check(/GG101/.test(hoverText), 'the hover names the code');
    mark('hoverShown');
    await shot('03-hover');
    if (README_SHOT) {
      // The squiggle and its hover, cropped, for the README.
      const h = await page.locator('.monaco-hover:not(.hidden)').first().boundingBox();
      const s = await squiggle1.boundingBox();
      const x0 = Math.max(0, Math.min(h.x, s.x) - 80), y0 = Math.max(0, Math.min(h.y, s.y) - 40);
      const x1 = Math.min(1280, Math.max(h.x + h.width, s.x + s.width) + 40), y1 = Math.min(800, Math.max(h.y + h.height, s.y + s.height) + 90);
      fs.mkdirSync(path.dirname(README_SHOT), { recursive: true });
      await page.screenshot({ path: README_SHOT, clip: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } });
      log(`README screenshot ${README_SHOT}`);
    }

    // The code in the hover links to the rule docs, opened inside VS Code (no network).
    await retry('rule docs link', 3, async () => {
      let link = page.locator('.monaco-hover:not(.hidden) a', { hasText: 'GG101' }).first();
      if (!(await link.isVisible())) {
        const box = await squiggle1.boundingBox();
        await page.mouse.move(10, 10);
        await page.mouse.move(box.x + Math.min(box.width / 2, 12), box.y + box.height / 2, { steps: 3 });
        link = page.locator('.monaco-hover:not(.hidden) a', { hasText: 'GG101' }).first();
        await link.waitFor({ state: 'visible', timeout: 15000 });
      }
      await link.click();
      await page.locator('.tab', { hasText: /GG101/ }).first().waitFor({ timeout: 15000 });
    });
    mark('ruleDocsOpened');
    await page.mouse.move(1200, 700);
    await page.keyboard.press('Escape');
    await sleep(1000); // let the Markdown preview render for the screenshot
    await shot('04-rule-docs');
    // Back to the program: close the preview (it opened beside the editor) and focus the source.
    await page.keyboard.press('Control+KeyW');
    await page.locator('.tab', { hasText: /GG101/ }).first().waitFor({ state: 'detached', timeout: 15000 }).catch(() => {});
    await openFile(page, 'leaf_inplace.py', 'w += 1');

    await applyQuickFix(page, await squiggleOnLine(editor1, 'w += 1', MEDIUM), /w = w \+ 1/, '05-quickfix-menu', shot);
    await page.locator('.view-line', { hasText: 'w = w + 1' }).first().waitFor();
    await page.keyboard.press('Control+KeyS');
    const fixed1 = await waitFor(() => {
      const c = fs.readFileSync(leaf, 'utf8');
      return c.includes('w = w + 1') ? c : null;
    }, MEDIUM, 'program 1 saved with the quick fix');
    check(!fixed1.includes('w += 1'), 'w += 1 is gone from the file on disk');
    mark('quickFixSavedOnDisk');
    await waitFor(async () => (await editor1.locator('.squiggly-error, .squiggly-warning').count()) === 0, MEDIUM,
      'the squiggle to go away after the fix');
    await shot('06-quickfix-saved');

    // ---- program 2: index writes into a tensor read into the graph; fix all on save --------------
    const loop = path.join(ws, 'index_write_loop.py');
    const editor2 = await openFile(page, 'index_write_loop.py', 'x[i+1] = torch.sin(x[i]) * w[i]');
    await squiggleOnLine(editor2, 'x[i+1] = torch.sin(x[i]) * w[i]', LONG);
    mark('program2Squiggle');
    const problems2 = await problemsFor(page, 'index_write_loop.py');
    log(`problems in index_write_loop.py: ${JSON.stringify(problems2)}`);
    check(problems2.some((p) => p.code === 'GG301' && p.line === 6), 'GG301 reported on line 6 of program 2');
    await shot('07-program2');
    // Make the buffer dirty without touching the code (a trailing newline), then save: the
    // codeActionsOnSave setting runs source.fixAll.gradguard before the write.
    await editor2.locator('.view-line', { hasText: 'loss.backward()' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+KeyS');
    const fixed2 = await waitFor(() => {
      const c = fs.readFileSync(loop, 'utf8');
      return c.includes('torch.sin(x[i].clone())') ? c : null;
    }, MEDIUM, 'program 2 saved with the fix-all edit');
    mark('fixAllOnSave');
    log(`program 2 on disk after save:\n${fixed2}`);
    await shot('08-program2-fixed-on-save');

    // ---- program 3: optimizer step against a retained graph --------------------------------------
    const editor3 = await openFile(page, 'rnn_retain_graph.py', 'h_cur = h_next');
    // The engine may flag the step() line, the carried-state line, or both.
    await squiggleOnLine(editor3, ['opt.step()', 'h_cur = h_next'], LONG);
    mark('program3Squiggle');
    const problems3 = await problemsFor(page, 'rnn_retain_graph.py');
    log(`problems in rnn_retain_graph.py: ${JSON.stringify(problems3)}`);
    const lines3 = new Set(problems3.filter((p) => /^GG4\d\d$/.test(p.code)).map((p) => p.line));
    check(lines3.has(14) || lines3.has(15), 'a GG4xx finding on the opt.step() / h_cur = h_next lines of program 3');
    check([...lines3].every((l) => l === 14 || l === 15), 'GG4xx findings only on lines 14 and 15 of program 3');
    await shot('09-program3');

    // ---- the language status item: server state, interpreter, last analysis ---------------------
    const statusText = await retry('language status', 3, async () => {
      await page.locator('[id="status.languageStatus"]').first().click();
      const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: 'last analysis' }).first();
      await hover.waitFor({ state: 'visible', timeout: 15000 });
      return hover.innerText();
    });
    log(`language status: ${JSON.stringify(statusText)}`);
    check(statusText.includes(PYTHON) && /bundled gradguard/.test(statusText), 'the language status names the bundled server and the interpreter');
    await shot('10-language-status');
    await page.keyboard.press('Escape');

    // ---- explain a traceback: the selection goes to `gradguard explain -`, the answer to a preview --
    const tbEditor = await openFile(page, 'traceback.txt', 'RuntimeError');
    await tbEditor.locator('.view-line', { hasText: 'RuntimeError' }).first().click();
    await page.keyboard.press('Control+KeyA');
    await runCommand(page, 'gradguard: Explain Traceback');
    await page.locator('.tab', { hasText: /traceback\.md/ }).first().waitFor({ timeout: LONG });
    const explained = await waitFor(() => frameText(page, /gradguard explain/), MEDIUM, 'the explanation rendered');
    log(`explanation (start): ${JSON.stringify(explained.slice(0, 300))}`);
    check(/index_loop\.py/.test(explained), 'the explanation names the file from the traceback');
    mark('tracebackExplained');
    await shot('11-explain-traceback');

    // ---- a notebook with markdown cells: the hover and the Problems panel number cells as VS Code does ----
    const notebook = await retry('open cell_numbers.ipynb', 3, async () => {
      await explorerRow(page, 'cell_numbers.ipynb').click();
      await page.locator('.tab.active', { hasText: 'cell_numbers.ipynb' }).waitFor({ timeout: 15000 });
      // A notebook editor is an overlay above its editor group, not inside it.
      const nb = page.locator('.notebookOverlay', { has: page.locator('.view-line', { hasText: 'w = torch.rand' }) }).first();
      await nb.locator('.view-line', { hasText: 'w += 1' }).first().waitFor({ timeout: 15000 });
      return nb;
    });
    const nbSquiggle = await squiggleOnLine(notebook, 'w += 1', LONG);
    // VS Code's own number of a cell: its status bar says 'Cell 2 of 4' while the cursor is in that cell.
    const cellInStatusBar = (lineText) => retry(`the status bar's cell of '${lineText}'`, 3, async () => {
      await notebook.locator('.view-line', { hasText: lineText }).first().click();
      const item = page.locator('.statusbar-item', { hasText: /^Cell \d+ of \d+$/ }).first();
      return waitFor(async () => {
        const m = ((await item.innerText().catch(() => '')) || '').match(/^Cell (\d+) of (\d+)$/);
        return m && m[0];
      }, 15000, 'a Cell N of M status bar item');
    });
    const createdShown = await cellInStatusBar('w = torch.rand');
    const bugShown = await cellInStatusBar('w += 1');
    log(`VS Code's status bar: ${createdShown} (where w is created), ${bugShown} (w += 1)`);
    check(createdShown === 'Cell 2 of 4' && bugShown === 'Cell 4 of 4', 'VS Code counts the markdown cells');
    const createdCell = Number(createdShown.split(' ')[1]);
    const nbHover = await retry('notebook hover', 3, async () => {
      const box = await nbSquiggle.boundingBox();
      await page.mouse.move(10, 10);
      await page.mouse.move(box.x + Math.min(box.width / 2, 12), box.y + box.height / 2, { steps: 3 });
      const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: /GG101/ }).first();
      await hover.waitFor({ state: 'visible', timeout: 15000 });
      await sleep(300);
      return hover.innerText();
    });
    const hoverCells = [...nbHover.matchAll(/line 2 of cell (\d+)/g)].map((m) => Number(m[1]));
    log(`notebook hover names cells ${JSON.stringify(hoverCells)}: ${JSON.stringify(nbHover.slice(0, 300))}`);
    check(hoverCells.length > 0 && hoverCells.every((c) => c === createdCell), `the hover names the cell as VS Code numbers it (cell ${createdCell})`);
    await page.keyboard.press('Escape');
    const nbProblems = await problemsFor(page, 'cell_numbers.ipynb');
    log(`problems in cell_numbers.ipynb: ${JSON.stringify(nbProblems)}`);
    check(nbProblems.some((p) => p.code === 'GG101' && p.line === 1 && p.text.includes(`(created on line 2 of cell ${createdCell})`)),
      'the Problems panel names the cell as VS Code numbers it');
    // the command line on the same notebook: the same cells, in the same words (-P: not the workspace's gradguard/)
    const bugCell = Number(bugShown.split(' ')[1]);
    const cliText = spawnSync(ENV_PYTHON, ['-P', '-m', 'gradguard', 'check', '--no-cache', 'cell_numbers.ipynb'], { cwd: ws, encoding: 'utf8' }).stdout;
    log(`gradguard check cell_numbers.ipynb: ${JSON.stringify(cliText.split('\n').slice(0, 4))}`);
    check(cliText.startsWith(`cell_numbers.ipynb:cell ${bugCell}:1:1: GG101 `) && cliText.includes(`(created on line 2 of cell ${createdCell})`)
      && cliText.includes(`= note: line 2 of cell ${createdCell}: `), 'gradguard check names the cells as VS Code numbers them');
    mark('notebookCellNumbers');
    await shot('12-notebook-cell-numbers');

    // ---- Language Model Tools, called through vscode.lm.invokeTool by another extension (as agent mode does) ----
    await openFile(page, 'rnn_retain_graph.py', 'h_cur = h_next'); // the active editor, for a check without a path
    const tracebackText = fs.readFileSync(path.join(ws, 'traceback.txt'), 'utf8');
    const lmCalls = [
      { tool: 'gradguard_check', input: { path: 'sigmoid_relu.py' } },
      { tool: 'gradguard_check', input: {} },
      { tool: 'gradguard_explain', input: { traceback: tracebackText } },
      { tool: 'gradguard_check', input: { path: path.join(WORK, 'outside.py') } },
      { tool: 'gradguard_check', input: { path: 'split_cells.ipynb' } },
      { tool: 'gradguard_check', input: { path: 'cell_numbers.ipynb' } },
      { tool: 'gradguard_check', input: { paths: ['sigmoid_relu.py', 'split_cells.ipynb'] } },
      { tool: 'gradguard_check', input: { paths: ['sigmoid_relu.py', path.join(WORK, 'outside.py')] } },
    ];
    fs.writeFileSync(path.join(lmDir, 'request.json'), JSON.stringify(lmCalls));
    await runCommand(page, 'E2E probe: Invoke Language Model Tools');
    const lm = await waitFor(() => fs.existsSync(path.join(lmDir, 'response.json')) && JSON.parse(fs.readFileSync(path.join(lmDir, 'response.json'), 'utf8')),
      LONG, 'the Language Model Tools answers');
    log(`language model tools: ${JSON.stringify(lm.tools.map((t) => [t.name, Object.keys(t.inputSchema.properties), t.tags]))}`);
    check(JSON.stringify(lm.tools.map((t) => t.name).sort()) === '["gradguard_check","gradguard_explain"]', 'vscode.lm.tools lists both gradguard tools');
    check(lm.tools.every((t) => /autograd/.test(t.description)), 'each tool has its model description');
    const [fileCheck, editorCheck, explainCall, outsideCheck, notebookCheck, cellNumbersCheck, listCheck, listOutside] = lm.results;
    const textOf = (r) => { check(!r.error && r.parts.length === 1 && 'text' in r.parts[0], `${r.tool} answered text (${JSON.stringify(r)})`); return r.parts[0].text; };
    const fileLines = textOf(fileCheck).split('\n');
    log(`gradguard_check sigmoid_relu.py:\n${fileLines.slice(0, 3).join('\n')}`);
    check(fileLines[0] === 'sigmoid_relu.py: 1 finding.', 'gradguard_check on a file no editor opened: its one finding');
    check(fileLines[1].startsWith('sigmoid_relu.py:8:5: GG202 (inplace-activation-on-saved, error) `ReLU(inplace=True)` overwrites'),
      'the finding with its line, column, code and message');
    check(fileLines[2].startsWith('  fix (safe): Use `inplace=False`') && fileLines[2].endsWith(": replace 8:21-8:25 with 'False'"),
      'the fix with its safety and edit');
    const editorText = textOf(editorCheck);
    log(`gradguard_check (active editor): ${JSON.stringify(editorText.split('\n').slice(0, 2))}`);
    check(/^rnn_retain_graph\.py: \d+ findings?\./.test(editorText), 'gradguard_check without a path checks the active editor');
    check(/^rnn_retain_graph\.py:1[45]:\d+: GG4\d\d /m.test(editorText), 'its GG4xx finding on line 14 or 15');
    const explainText = textOf(explainCall);
    check(explainText.startsWith('gradguard explain: a tensor saved for backward was modified in place') && /index_loop\.py/.test(explainText),
      'gradguard_explain gives what gradguard explain prints for the traceback');
    check(/outside the workspace folders; not checked/.test(outsideCheck.error || ''), `a path outside the workspace is refused (${JSON.stringify(outsideCheck)})`);
    const notebookLines = textOf(notebookCheck).split('\n');
    log(`gradguard_check split_cells.ipynb: ${JSON.stringify(notebookLines.slice(0, 3))}`);
    check(notebookLines[0] === 'split_cells.ipynb: 1 finding.' && notebookLines[1].startsWith('split_cells.ipynb:cell 2:1:1: GG101 '),
      'gradguard_check on a notebook no editor opened names the cell and its line');
    const cellNumbersLine = textOf(cellNumbersCheck).split('\n')[1];
    log(`gradguard_check cell_numbers.ipynb: ${JSON.stringify(cellNumbersLine)}`);
    check(cellNumbersLine.startsWith('cell_numbers.ipynb:cell 4:1:1: GG101 ') && cellNumbersLine.includes('(created on line 2 of cell 2)'),
      "the Language Model Tool counts the markdown cells as VS Code's status bar does");
    // a list of files (issue 32): checked together as saved, only the files with findings listed
    const listLines = textOf(listCheck).split('\n');
    log(`gradguard_check [sigmoid_relu.py, split_cells.ipynb]: ${JSON.stringify(listLines.slice(0, 5))}`);
    check(listLines[0] === 'sigmoid_relu.py, split_cells.ipynb: 2 findings in 2 files (2 files checked).'
      && listLines.includes('sigmoid_relu.py: 1 finding.') && listLines.includes('split_cells.ipynb: 1 finding.')
      && listLines.some((l) => l.startsWith('split_cells.ipynb:cell 2:1:1: GG101 ')),
    'gradguard_check with `paths` checks the files together and names each finding\'s file (and cell)');
    check(/outside\.py: outside the workspace folders; not checked/.test(listOutside.error || ''),
      `a list with a path outside the workspace is refused (${JSON.stringify(listOutside)})`);
    mark('languageModelTools');

    // ---- importStrategy fromEnvironment, with an environment that has gradguard: that one runs -----
    // A workspace setting (the file watcher on the workspace picks it up; the workspace is trusted).
    fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
    const startsBefore = readTrace(traceFile).filter((e) => e.event === 'serverStarting').length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.importStrategy': 'fromEnvironment', 'gradguard.interpreter': ENV_PYTHON }, null, 2));
    const envStart = await waitFor(() => readTrace(traceFile).filter((e) => e.event === 'serverStarting')[startsBefore],
      LONG, 'the server restarted for importStrategy fromEnvironment');
    log(`server started as: ${envStart.description} (${envStart.python} ${envStart.args.join(' ')})`);
    check(envStart.kind === 'environment' && envStart.python === ENV_PYTHON, "fromEnvironment ran the environment's gradguard");
    check(envStart.args.join(' ').startsWith('-P -m gradguard server'), 'the environment server was started as -P -m gradguard server');
    await waitFor(() => readTrace(traceFile).slice(startsBefore).find((e) => e.event === 'firstDiagnostics'), LONG,
      "diagnostics from the environment's server");
    // The traceback and its explanation are in front: back to program 3.
    const editor3env = await openFile(page, 'rnn_retain_graph.py', 'h_cur = h_next');
    await squiggleOnLine(editor3env, ['opt.step()', 'h_cur = h_next'], LONG);
    const logText = await waitFor(() => {
      const text = extensionLog(ud);
      return /Server: the environment's gradguard/.test(text) ? text : null;
    }, MEDIUM, "the gradguard log naming the environment's server");
    log(`log: ${JSON.stringify(logText.split('\n').filter((l) => /Server/.test(l)).slice(-2))}`);
    mark('fromEnvironmentUsed');
    await shot('12-from-environment');

    // ---- the extension's `gradguard mcp` (issue 32): VS Code asked the extension's MCP server definition provider
    // at startup, with no MCP configuration; the bundled server then running has no MCP SDK, so it was not offered.
    // (VS Code 1.100 did not ask again when the environment's gradguard, which has the SDK, started: that VS Code
    // lists it is not shown here.)
    const offeredLog = extensionLog(ud).split('\n').filter((l) => /gradguard mcp (is not )?offered/.test(l));
    log(`MCP offers: ${JSON.stringify(offeredLog)}`);
    check(/not offered to agents: gradguard mcp: the MCP SDK is not installed in this Python/.test(offeredLog[0] || ''),
      'VS Code asked the MCP provider; the bundled server (no MCP SDK) was not offered, and activation went on');
    mark('mcpProviderAsked');

    // ---- fromEnvironment, but the environment lacks gradguard: the bundled one runs, one notice -------
    await runCommand(page, 'Notifications: Clear All Notifications');
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.importStrategy': 'fromEnvironment', 'gradguard.interpreter': PYTHON }, null, 2));
    const toast = page.locator('.notification-toast', { hasText: 'runs instead' }).first();
    await toast.waitFor({ state: 'visible', timeout: LONG });
    const toastText = await toast.innerText();
    log(`fallback notification: ${JSON.stringify(toastText)}`);
    check(toastText.includes(`${PYTHON} -m pip install `) && /gradguard-[\d.]+-py3-none-any\.whl/.test(toastText),
      'the notification gives the install command for the wheel inside the extension (no package index)');
    const wheel = (toastText.match(/(\S+gradguard-[\d.]+-py3-none-any\.whl)/) || [])[1];
    check(wheel && fs.existsSync(wheel), `the wheel the install command names exists (${wheel})`);
    check(await toast.locator('a.monaco-button, .monaco-button', { hasText: 'Install in Terminal' }).count() === 1,
      'the notification offers to install in a terminal');
    const fallbackStart = readTrace(traceFile).filter((e) => e.event === 'serverStarting').pop();
    check(fallbackStart.kind === 'bundled' && fallbackStart.python === PYTHON, 'without gradguard in the environment, the bundled server runs');
    await squiggleOnLine(editor3env, ['opt.step()', 'h_cur = h_next'], LONG);
    await sleep(3000);
    check(await page.locator('.notification-toast', { hasText: 'gradguard' }).count() === 1, 'exactly one gradguard notification');
    mark('notInstalledFallsBackToBundled');
    await shot('13-not-installed-fallback');

    // ---- gradguard.path: a pipx-style executable whose version differs: one notice, with the way out -----
    const older = path.join(WORK, 'older-gradguard');
    fs.writeFileSync(older, `#!${ENV_PYTHON}\n# gradguard, reporting version 0.0.1\nimport sys, importlib.metadata as m\n` +
      `_version = m.version\nm.version = lambda name: '0.0.1' if name == 'gradguard' else _version(name)\n` +
      `from gradguard.cli import entry\nsys.exit(entry())\n`);
    fs.chmodSync(older, 0o755);
    await runCommand(page, 'Notifications: Clear All Notifications');
    const startsBeforePath = readTrace(traceFile).filter((e) => e.event === 'serverStarting').length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'gradguard.path': older }, null, 2));
    const mismatch = page.locator('.notification-toast', { hasText: 'version 0.0.1' }).first();
    await mismatch.waitFor({ state: 'visible', timeout: LONG });
    log(`version notification: ${JSON.stringify(await mismatch.innerText())}`);
    const pathStart = readTrace(traceFile).filter((e) => e.event === 'serverStarting')[startsBeforePath];
    check(pathStart && pathStart.kind === 'path' && pathStart.python === older, 'gradguard.path ran that executable');
    await sleep(700); // the toast slides in
    await shot('14-version-mismatch');
    await mismatch.locator('.monaco-button', { hasText: 'Use Bundled Server' }).click();
    const backStart = await waitFor(() => readTrace(traceFile).filter((e) => e.event === 'serverStarting')[startsBeforePath + 1],
      LONG, 'a restart after "Use Bundled Server"');
    check(backStart.kind === 'bundled', '"Use Bundled Server" switched back to the bundled server');
    check(!('gradguard.path' in JSON.parse(fs.readFileSync(path.join(ws, '.vscode', 'settings.json'), 'utf8'))),
      '"Use Bundled Server" removed gradguard.path from the workspace settings');
    mark('versionMismatchShownWithWayOut');
    // Once: the same server again (here after a restart) is only logged.
    await runCommand(page, 'Notifications: Clear All Notifications');
    const startsBeforeAgain = readTrace(traceFile).filter((e) => e.event === 'serverStarting').length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'gradguard.path': older }, null, 2));
    await waitFor(() => readTrace(traceFile).slice(startsBeforeAgain).some((e) => e.event === 'clientReady' && e.kind === 'path'), LONG,
      'the older gradguard started again');
    await waitFor(() => /differs from the extension's [\d.]+ \(already reported\)/.test(extensionLog(ud)), MEDIUM,
      'the repeated mismatch in the log');
    await waitFor(() => readTrace(traceFile).slice(startsBeforeAgain).some((e) => e.event === 'firstDiagnostics'), LONG,
      'diagnostics from the gradguard.path executable');
    await sleep(2000);
    const againToasts = await page.locator('.notification-toast', { hasText: 'version 0.0.1' }).count();
    check(againToasts === 0, `the version mismatch is shown once (shown again ${againToasts} times)`);
    mark('versionMismatchShownOnce');

    // ---- the oldest CPython the bundle claims: a project venv of it, without gradguard, runs the bundled server ----
    const extensionDir = fs.readdirSync(exts).map((d) => path.join(exts, d)).find((d) => /\.gradguard-[\d.]+/.test(d));
    const claimed = JSON.parse(fs.readFileSync(path.join(extensionDir, 'bundled', 'manifest.json'), 'utf8')).pythons;
    await runCommand(page, 'Notifications: Clear All Notifications');
    const startsBeforeOldest = readTrace(traceFile).filter((e) => e.event === 'serverStarting').length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'gradguard.interpreter': OLDEST_PYTHON }, null, 2));
    const oldestStart = await waitFor(() => readTrace(traceFile).filter((e) => e.event === 'serverStarting')[startsBeforeOldest],
      LONG, `the restart with ${OLDEST_PYTHON}`);
    log(`server started as: ${oldestStart.description} (${oldestStart.python} ${oldestStart.args.join(' ')})`);
    check(oldestStart.kind === 'bundled' && oldestStart.python === OLDEST_PYTHON,
      `the bundled server ran with the selected ${OLDEST_PYTHON} itself (not another Python from PATH)`);
    check(new RegExp(`\\(Python ${claimed[0].replace('.', '\\.')}\\.\\d+\\)`).test(oldestStart.description),
      `the interpreter is CPython ${claimed[0]}, the oldest the bundle claims (${claimed.join(', ')})`);
    await waitFor(() => readTrace(traceFile).slice(startsBeforeOldest).find((e) => e.event === 'firstDiagnostics'), LONG,
      `diagnostics from the bundled server on Python ${claimed[0]}`);
    await squiggleOnLine(await openFile(page, 'rnn_retain_graph.py', 'h_cur = h_next'), ['opt.step()', 'h_cur = h_next'], LONG);
    await sleep(1500);
    const oldestToasts = await page.locator('.notification-toast', { hasText: 'gradguard' }).allInnerTexts();
    check(oldestToasts.length === 0, `no fallback notice on Python ${claimed[0]} (saw ${JSON.stringify(oldestToasts)})`);
    mark('bundledServerOnOldestPython');
    await shot('15-oldest-python');

    // ---- lint.run onSave (sent to the running server): typing publishes nothing, saving does -------
    const configsBefore = (extensionLog(ud).match(/Sending notification 'workspace\/didChangeConfiguration'/g) || []).length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.interpreter': OLDEST_PYTHON, 'gradguard.lint.run': 'onSave' }, null, 2));
    await waitFor(() => (extensionLog(ud).match(/Sending notification 'workspace\/didChangeConfiguration'/g) || []).length > configsBefore,
      LONG, 'the lint.run setting sent to the running server');
    check(readTrace(traceFile).filter((e) => e.event === 'serverStarting').length === startsBeforeOldest + 1,
      'changing lint.run did not restart the server');
    // (after `w = w + 1` w is no leaf any more, so the new write goes right below its creation)
    const editorSave = await openFile(page, 'leaf_inplace.py', 'requires_grad=True');
    await editorSave.locator('.view-line', { hasText: 'requires_grad=True' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type('w += 1');
    await editorSave.locator('.view-line', { hasText: 'w += 1' }).first().waitFor();
    await sleep(4000); // onType would have published within the 150 ms debounce and a ~10 ms analysis
    const whileTyping = await editorSave.locator('.squiggly-error, .squiggly-warning').count();
    await shot('16-on-save-typed');
    check(whileTyping === 0, `lint.run onSave: no squiggle while typing (saw ${whileTyping})`);
    await page.keyboard.press('Control+KeyS');
    await squiggleOnLine(editorSave, 'w += 1', LONG);
    check(/^w \+= 1$/m.test(fs.readFileSync(leaf, 'utf8')), 'the typed line was saved');
    mark('lintOnSaveOnlyOnSave');
    await shot('17-on-save-saved');

    // ---- a server that exits at once: one notification, no restart loop ----------------------------
    const crashing = path.join(WORK, 'crashing-python');
    fs.writeFileSync(crashing, `#!/bin/sh\nfor a in "$@"; do [ "$a" = server ] && { echo "server crashed on purpose" >&2; exit 3; }; done\nexec '${PYTHON}' "$@"\n`);
    fs.chmodSync(crashing, 0o755);
    await runCommand(page, 'Notifications: Clear All Notifications');
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'gradguard.interpreter': crashing }, null, 2));
    await page.locator('.notification-toast', { hasText: 'did not start' }).first().waitFor({ state: 'visible', timeout: LONG });
    await sleep(5000); // a restart loop would add more
    const toasts = await page.locator('.notification-toast').allInnerTexts();
    log(`notifications after the crash: ${JSON.stringify(toasts)}`);
    check(toasts.length === 1, 'exactly one notification after the server crashed at start');
    const starts = readTrace(traceFile).filter((e) => e.event === 'serverStarting' && e.python === crashing).length;
    check(starts === 1, `the crashing server was started once, not in a loop (started ${starts} times)`);
    mark('crashReportedOnce');
    await shot('18-server-crashed');

    // ---- gradguard.showNotifications off: the same failure is only logged ----------------------------
    const crashingQuiet = path.join(WORK, 'crashing-python-quiet');
    fs.copyFileSync(crashing, crashingQuiet);
    fs.chmodSync(crashingQuiet, 0o755);
    await runCommand(page, 'Notifications: Clear All Notifications');
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.interpreter': crashingQuiet, 'gradguard.showNotifications': 'off' }, null, 2));
    await waitFor(() => readTrace(traceFile).some((e) => e.event === 'serverStarting' && e.python === crashingQuiet), LONG,
      'the restart with the second crashing interpreter');
    await waitFor(() => /did not start[^\n]*crashing-python-quiet/.test(extensionLog(ud)), LONG, 'the failure in the log');
    await sleep(3000);
    const quietToasts = await page.locator('.notification-toast', { hasText: 'gradguard' }).count();
    check(quietToasts === 0, `showNotifications off: no notification for the failed start (saw ${quietToasts})`);
    mark('showNotificationsOffOnlyLogs');

    // ---- the server's own messages (window/showMessage) follow gradguard.showNotifications too ----------
    // A broken [tool.gradguard] makes the server show one error message. With onError it is a notification;
    // after a restart with showNotifications off, the same message only reaches the log.
    fs.writeFileSync(path.join(ws, 'pyproject.toml'), '[tool.gradguard]\nselect = 5\n');
    const configError = /`select` must be a list of rule codes/;
    await runCommand(page, 'Notifications: Clear All Notifications');
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.interpreter': PYTHON, 'gradguard.showNotifications': 'onError' }, null, 2));
    await openFile(page, 'rnn_retain_graph.py', 'h_cur = h_next');
    const shown = page.locator('.notification-toast', { hasText: configError }).first();
    await shown.waitFor({ state: 'visible', timeout: LONG });
    log(`server message shown with onError: ${JSON.stringify(await shown.innerText())}`);
    mark('serverMessageShownOnError');
    await runCommand(page, 'Notifications: Clear All Notifications');
    const logBefore = (extensionLog(ud).match(/`select` must be a list of rule codes/g) || []).length;
    const startsBeforeQuiet = readTrace(traceFile).filter((e) => e.event === 'serverStarting').length;
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'),
      JSON.stringify({ 'gradguard.interpreter': OLDEST_PYTHON, 'gradguard.showNotifications': 'off' }, null, 2));
    await waitFor(() => readTrace(traceFile).filter((e) => e.event === 'serverStarting').length > startsBeforeQuiet, LONG,
      'the restart with showNotifications off');
    await waitFor(() => (extensionLog(ud).match(/`select` must be a list of rule codes/g) || []).length > logBefore, LONG,
      "the restarted server's message in the log");
    await sleep(3000);
    const quietServerToasts = await page.locator('.notification-toast').allInnerTexts();
    check(quietServerToasts.length === 0, `showNotifications off: the server's message is not a notification (saw ${JSON.stringify(quietServerToasts)})`);
    fs.rmSync(path.join(ws, 'pyproject.toml'));
    mark('serverMessagesFollowShowNotifications');

    // ---- the extension's Details page, as after installing the .vsix: icon, publisher, README with its image ----
    await retry('the installed extension in the Extensions view', 3, async () => {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+Shift+KeyX');
      await sleep(1000);
      await page.keyboard.press('Control+KeyA');
      await page.keyboard.type('@installed gradguard');
      await page.locator('.extension-list-item', { hasText: 'gradguard' }).first().click({ timeout: 15000 });
    });
    const details = page.locator('.extension-editor').first();
    await details.locator('.header', { hasText: 'gradguard-authors' }).first().waitFor({ timeout: LONG });
    const icons = await details.locator('img').evaluateAll((imgs) => imgs.map((i) => ({ src: i.currentSrc, width: i.naturalWidth })));
    check(icons.some((i) => /images(%2F|\/)icon\.png/.test(i.src) && i.width === 128), `the icon renders on the Details page (${JSON.stringify(icons)})`);
    const readmeImage = await waitFor(async () => {
      for (const frame of page.frames()) {
        const found = await frame.evaluate(() => {
          const img = document.querySelector('img[alt="A squiggle and its hover"]');
          return img && img.complete ? { width: img.naturalWidth, scheme: img.currentSrc.split(':')[0] } : null;
        }).catch(() => null);
        if (found) return found;
      }
      return null;
    }, LONG, "the README's screenshot on the Details page");
    log(`README image on the Details page: ${JSON.stringify(readmeImage)}`);
    check(readmeImage.width > 0, `the README's screenshot renders on the Details page (${JSON.stringify(readmeImage)})`);
    await shot('19-extension-details');
    mark('extensionDetailsRender');

    // ---- untrusted-repository check: nothing imported the workspace's gradguard/ ---------------------
    check(!fs.existsSync(marker), `no process imported the workspace's gradguard/ (${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''})`);
    mark('noWorkspaceCodeRan');

    console.log('RESULT ' + JSON.stringify({ ok: true, timings }));
  } finally {
    if (page) await page.screenshot({ path: path.join(SHOTS, '99-last.png') }).catch(() => {});
    if (browser) await browser.close().catch(() => {});
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      try { process.kill(-cs.pid, signal); } catch (_) { /* already gone */ }
      await sleep(1000);
    }
  }
}

/** Runs a command from the command palette by its title. */
async function runCommand(page, title) {
  await retry(`command ${title}`, 3, async () => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 15000 });
    await input.fill(`>${title}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 15000 });
    await page.keyboard.press('Enter');
  });
}

/** The text of the first frame (webviews such as the Markdown preview live in frames) matching `pattern`. */
async function frameText(page, pattern) {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    const text = await frame.evaluate(() => (document.body ? document.body.innerText : '')).catch(() => '');
    if (pattern.test(text)) return text;
  }
  return null;
}

/** The gradguard output channel's log file(s) under code-server's logs folder. */
function extensionLog(userData) {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name === 'gradguard.log' || /-gradguard\.log$/.test(entry.name)) found.push(p);
    }
  };
  walk(path.join(userData, 'logs'));
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

function explorerRow(page, name) {
  return page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first();
}

/** Opens a file from the Explorer and returns its editor once `text` is rendered. */
async function openFile(page, name, text) {
  return retry(`open ${name}`, 3, async () => {
    await explorerRow(page, name).click();
    await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15000 });
    const editor = page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
    await editor.locator('.view-line', { hasText: text }).first().waitFor({ timeout: 15000 });
    return editor;
  });
}

/**
 * Waits for an error/warning squiggle on a line whose text contains `lineText` (or one of several),
 * by geometry: decorations and text lines share the editor's line grid.
 */
async function squiggleOnLine(editor, lineText, timeoutMs) {
  const texts = Array.isArray(lineText) ? lineText : [lineText];
  return waitFor(async () => {
    const squiggles = editor.locator('.squiggly-error, .squiggly-warning');
    const n = await squiggles.count();
    for (const text of texts) {
      const lineBox = await editor.locator('.view-line', { hasText: text }).first().boundingBox();
      if (!lineBox) continue;
      for (let i = 0; i < n; i++) {
        const box = await squiggles.nth(i).boundingBox();
        if (box && Math.abs(box.y + box.height / 2 - (lineBox.y + lineBox.height / 2)) < lineBox.height / 2) {
          return squiggles.nth(i);
        }
      }
    }
    return null;
  }, timeoutMs, `a squiggle on the line '${texts.join("' or '")}'`, 200);
}

/**
 * The Problems panel's rows for one file, as {code, line, message}. The panel is opened with
 * Ctrl+Shift+M and closed again, so it does not cover the editor in screenshots.
 */
async function problemsFor(page, fileName) {
  return retry('read the Problems panel', 3, async () => {
    await page.keyboard.press('Control+Shift+KeyM');
    const panel = page.locator('.markers-panel');
    await panel.waitFor({ state: 'visible', timeout: 15000 });
    await panel.locator('.monaco-list-row', { hasText: fileName }).first().waitFor({ timeout: 15000 });
    await sleep(300);
    const rows = await panel.locator('.monaco-list-row').evaluateAll((els) =>
      els.map((e) => `${e.getAttribute('aria-label') || ''} | ${e.textContent || ''}`));
    // Rows are grouped under their file; keep the marker rows after this file's header row.
    const result = [];
    let inFile = false;
    for (const row of rows) {
      if (!/\[Ln \d+|at line \d+/i.test(row)) {
        inFile = row.includes(fileName);
        continue;
      }
      if (!inFile) continue;
      const code = (row.split(" | ").pop().match(/GG\d{3}/) || [])[0];
      const line = Number((row.match(/(?:\[Ln |at line )(\d+)/i) || [])[1]);
      result.push({ code, line, text: row.slice(0, 160) });
    }
    await page.keyboard.press('Control+Shift+KeyM'); // toggle the panel away again
    await sleep(200);
    check(result.length > 0, `the Problems panel lists problems for ${fileName} (rows: ${JSON.stringify(rows)})`);
    return result;
  });
}

/**
 * Puts the cursor on the squiggle, opens the quick-fix menu with Ctrl+. and picks the action whose
 * label matches `pattern` with the keyboard (a mouse click is blocked by the menu's pointer block).
 */
async function applyQuickFix(page, squiggle, pattern, shotName, shot) {
  await retry('quick fix menu', 3, async () => {
    const box = await squiggle.boundingBox();
    await page.mouse.click(box.x + 3, box.y + box.height / 2);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Period');
    const widget = page.locator('.action-widget');
    await widget.locator('.monaco-list-row', { hasText: pattern }).first().waitFor({ state: 'visible', timeout: 15000 });
    const labels = await widget.locator('.monaco-list-row').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') || e.textContent));
    log(`quick fixes offered: ${JSON.stringify(labels)}`);
    await shot(shotName);
    for (let i = 0; i < 20; i++) {
      const focused = await widget.locator('.monaco-list-row.focused').getAttribute('aria-label').catch(() => null);
      if (focused && pattern.test(focused)) {
        await page.keyboard.press('Enter');
        return;
      }
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Escape');
    throw new Error(`no quick fix matching ${pattern}`);
  });
}

main().catch((e) => {
  if (e instanceof UntilReached) {
    console.log('RESULT ' + JSON.stringify({ ok: true, until: e.message, timings }));
    return;
  }
  console.error('FAIL', (e && e.stack) || e);
  console.log('RESULT ' + JSON.stringify({ ok: false, error: String((e && e.message) || e), timings }));
  process.exitCode = 1;
});
