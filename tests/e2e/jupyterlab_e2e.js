#!/usr/bin/env node
// End-to-end test of gradguard in a real JupyterLab with jupyterlab-lsp (installed by `make jupyter-e2e`),
// driven by Debian's headless Chromium through playwright-core. Run through `make e2e` (tests/e2e/run.sh).
//
// A notebook whose bug spans two cells (a leaf tensor made in one, written in place in the next) must show
// gradguard's squiggle in the second cell, its message in the diagnostics panel, and the tensor's facts on
// hover; a .py file in the file editor must be underlined too. python-lsp-server is installed beside it: its
// hover must still answer (gradguard is added to the user's server, not swapped in).
// Cell numbers: the message and the hover name the cell the tensor was made in as JupyterLab counts cells
// (markdown too), jupyterlab-lsp's diagnostics panel puts the finding in the cell `gradguard check` names, and
// the notebook run in its kernel under `%load_ext gradguard` reports the same cell and line.
//
// Environment:
//   PYTHON    interpreter with gradguard[jupyter] and python-lsp-server (required)
//   WORK      scratch folder, wiped first (default: tests/e2e/artifacts/jupyterlab-work)
//   SHOTS     screenshot folder (default: tests/e2e/artifacts)
//   CHROMIUM  browser binary (default /usr/bin/chromium)
//   ALONE     1: gradguard alone (GRADGUARD_JUPYTER_SERVER=none, as with no pylsp installed): jupyterlab-lsp then
//             opens the notebook under its own path, not `.virtual_documents/`; the cells must be named the same
//             way, and pylsp's hover is not expected
// Prints one `RESULT {json}` line; the exit code is 0 only when every assertion held.
'use strict';
const { chromium } = require('playwright-core');
const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const net = require('net');
const path = require('path');

const HERE = __dirname;
const PYTHON = process.env.PYTHON;
const WORK = path.resolve(process.env.WORK || path.join(HERE, 'artifacts', 'jupyterlab-work'));
const SHOTS = path.resolve(process.env.SHOTS || path.join(HERE, 'artifacts'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const LONG = 90000;
const ALONE = process.env.ALONE === '1';

const T0 = Date.now();
const log = (m) => console.log(`[jupyterlab-e2e ${String(Date.now() - T0).padStart(6)}ms] ${m}`);
const timings = {};
const mark = (k) => { timings[k] = Date.now() - T0; log(`MARK ${k}`); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const check = (condition, message) => { if (!condition) throw new Error(`assertion failed: ${message}`); };

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
}

function getJson(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => { try { resolve(res.statusCode === 200 ? JSON.parse(body) : null); } catch (_) { resolve(null); } });
    });
    req.on('error', () => resolve(null));
    req.setTimeout(3000, () => { req.destroy(); resolve(null); });
  });
}

async function waitFor(fn, timeoutMs, what, stepMs = 250) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timeout (${timeoutMs} ms) waiting for ${what}`);
    await sleep(stepMs);
  }
}

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

// A PGD attack written as a notebook would be: the perturbation is made in one cell, updated in the next.
const CELLS = [
  ['markdown', '# PGD attack on a small classifier'],
  ['code', [
    '%load_ext gradguard',
    'import torch',
    'from torch import nn',
    '',
    'model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))',
    'x = torch.rand(5, 4)',
    'target = torch.tensor([0, 1, 0, 1, 1])',
    'eps, alpha = 0.1, 0.02',
    'delta = torch.zeros_like(x, requires_grad=True)',
  ].join('\n')],
  ['code', [
    'for step in range(3):',
    '    loss = nn.functional.cross_entropy(model(x + delta), target)',
    '    loss.backward()',
    '    delta.add_(alpha * delta.grad.sign())',
    '    delta.grad.zero_()',
  ].join('\n')],
];

function notebookJson() {
  return JSON.stringify({
    cells: CELLS.map(([type, source], i) => ({
      cell_type: type, id: `cell-${i}`, metadata: {}, source,
      ...(type === 'code' ? { execution_count: null, outputs: [] } : {}),
    })),
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3 (ipykernel)', language: 'python' },
      language_info: { name: 'python', mimetype: 'text/x-python', file_extension: '.py' },
    },
    nbformat: 4,
    nbformat_minor: 5,
  }, null, 1);
}

function writeSettings(dir, plugin, values) {
  const [pkg, name] = plugin.split(':');
  fs.mkdirSync(path.join(dir, pkg), { recursive: true });
  fs.writeFileSync(path.join(dir, pkg, `${name}.jupyterlab-settings`), JSON.stringify(values));
}

/** The screen box of `word` inside the first line of `scope` that contains `lineText`. */
async function textBox(scope, lineText, word) {
  const line = scope.locator('.cm-line', { hasText: lineText }).first();
  const box = await line.evaluate((el, args) => {
    const [lineText, word] = args;
    const at = el.textContent.indexOf(lineText) + lineText.indexOf(word);
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let offset = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const len = node.textContent.length;
      if (at < offset + len) {
        const range = document.createRange();
        range.setStart(node, at - offset);
        range.setEnd(node, Math.min(len, at - offset + word.length));
        const r = range.getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width, height: r.height };
      }
      offset += len;
    }
    return null;
  }, [lineText, word]);
  if (!box) throw new Error(`no "${word}" in a line with "${lineText}"`);
  return box;
}

async function main() {
  if (!PYTHON) throw new Error('set PYTHON (an interpreter with gradguard[jupyter] and python-lsp-server)');
  fs.rmSync(WORK, { recursive: true, force: true });
  const root = path.join(WORK, 'root');
  const home = path.join(WORK, 'home');
  const settingsDir = path.join(WORK, 'lab-user-settings');
  const profile = path.join(WORK, 'chromium-profile');
  for (const d of [root, home, settingsDir, profile, SHOTS]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(root, 'pgd.ipynb'), notebookJson());
  fs.copyFileSync(path.join(HERE, '..', '..', 'examples', 'leaf_inplace.py'), path.join(root, 'leaf_inplace.py'));
  // No news or update checks: the page must settle fast on 2 busy cores (the LSP needs no kernel).
  writeSettings(settingsDir, '@jupyterlab/apputils-extension:notification', { fetchNews: 'false', checkForUpdates: false });

  const port = await freePort();
  const token = crypto.randomBytes(16).toString('hex');
  const env = {
    ...process.env, HOME: home, JUPYTER_CONFIG_DIR: path.join(WORK, 'jupyter-config'),
    JUPYTER_RUNTIME_DIR: path.join(WORK, 'jupyter-runtime'), JUPYTERLAB_SETTINGS_DIR: settingsDir,
    JUPYTERLAB_WORKSPACES_DIR: path.join(WORK, 'lab-workspaces'), GRADGUARD_JUPYTER_SERVER: ALONE ? 'none' : '', GRADGUARD_JUPYTER_TRACE: path.join(WORK, 'proxy-trace.log'),
  };
  const lab = spawn(PYTHON, ['-m', 'jupyterlab', '--no-browser', '--ServerApp.ip=127.0.0.1', `--ServerApp.port=${port}`,
    '--ServerApp.port_retries=0', `--IdentityProvider.token=${token}`, `--ServerApp.root_dir=${root}`,
    '--LabApp.news_url=', '--LabApp.expose_app_in_browser=True', '--allow-root'],  // root in CI containers
  { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const labLog = fs.createWriteStream(path.join(WORK, 'jupyterlab.log'));
  lab.stdout.pipe(labLog);
  lab.stderr.pipe(labLog);
  log(`jupyter lab pid=${lab.pid} port=${port}`);

  const base = `http://127.0.0.1:${port}`;
  let browser;
  let page;
  const shot = async (name) => {
    const p = path.join(SHOTS, `${name}.png`);
    await page.screenshot({ path: p });
    log(`screenshot ${path.relative(process.cwd(), p)}`);
  };
  try {
    // jupyter-lsp's view of the servers: gradguard in front of pylsp, one spec for Python.
    const status = await waitFor(() => getJson(`${base}/lsp/status?token=${token}`), LONG, 'jupyter-lsp /lsp/status');
    mark('labServerUp');
    const specs = status.specs || {};
    log(`jupyter-lsp specs: ${Object.keys(specs).join(', ')}`);
    check(specs.gradguard, 'jupyter-lsp lists the gradguard spec (entry point jupyter_lsp_spec_v1)');
    const expectedName = ALONE ? 'gradguard' : 'gradguard + python-lsp-server (pylsp)';
    check(specs.gradguard.display_name === expectedName,
      `the gradguard spec ${ALONE ? 'runs alone' : 'fronts pylsp'} (display_name ${specs.gradguard.display_name})`);
    check(JSON.stringify(specs.gradguard.languages) === '["python"]', 'the gradguard spec is for python');
    const labSettings = await getJson(`${base}/lab/api/settings/@jupyter-lsp/jupyterlab-lsp:plugin?token=${token}`);
    const rank = labSettings && labSettings.schema.properties.language_servers.default.gradguard;
    log(`jupyterlab-lsp default for gradguard: ${JSON.stringify(rank)}`);
    // above the default 50 of every other server, so JupyterLab attaches gradguard (with pylsp behind it)
    check(rank && rank.priority === 60, 'overrides.d/gradguard.json gives gradguard priority 60 in jupyterlab-lsp');

    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      viewport: { width: 1280, height: 800 },
    });
    page = browser.pages()[0] || (await browser.newPage());
    page.setDefaultTimeout(30000);
    page.on('console', async (m) => {
      if (!/lsp|gradguard/i.test(m.text())) return;
      const args = await Promise.all(m.args().map((a) => a.jsonValue().catch(() => '?')));
      log(`console: ${JSON.stringify(args).slice(0, 400)}`);
    });
    await page.goto(`${base}/lab/tree/pgd.ipynb?token=${token}`);
    const cells = page.locator('.jp-Notebook .jp-CodeCell');
    await cells.nth(1).locator('.cm-line', { hasText: 'delta.add_' }).waitFor({ state: 'visible', timeout: LONG });
    mark('notebookOpen');
    await shot('jupyterlab-01-open');

    // the squiggle: one, in the second code cell, under the in-place update of the leaf made in the first
    const squiggle = cells.nth(1).locator('.cm-lintRange');
    await squiggle.first().waitFor({ state: 'visible', timeout: LONG });
    mark('squiggle');
    await shot('jupyterlab-02-squiggle');
    // which document jupyterlab-lsp opened for the notebook: beside pylsp, `.virtual_documents/pgd.ipynb` (the proxy
    // logs it); alone, no server needs documents on disk, so none is written and the notebook's own path is opened
    if (ALONE) {
      check(!fs.existsSync(path.join(root, '.virtual_documents')), 'alone, jupyterlab-lsp writes no .virtual_documents/');
    } else {
      const opened = fs.readFileSync(path.join(WORK, 'proxy-trace.log'), 'utf8').split('\n')
        .map((line) => { try { return JSON.parse(line.slice(line.indexOf('{'))); } catch (_) { return null; } })
        .filter((m) => m && m.method === 'textDocument/didOpen' && /pgd\.ipynb$/.test(m.params.textDocument.uri))
        .map((m) => m.params.textDocument.uri);
      log(`notebook documents opened: ${JSON.stringify(opened)}`);
      check(opened.length > 0 && opened.every((uri) => uri.includes('/.virtual_documents/')),
        `beside pylsp, jupyterlab-lsp opens the notebook under .virtual_documents/ (${JSON.stringify(opened)})`);
    }
    const squiggles = await page.locator('.cm-lintRange').allInnerTexts();
    log(`squiggles: ${JSON.stringify(squiggles)}`);
    check(squiggles.length === 1 && squiggles[0] === 'delta.add_(alpha * delta.grad.sign())',
      `one squiggle, under delta.add_(...) in cell 3 (${JSON.stringify(squiggles)})`);

    // its message, on hovering the squiggle
    const lintText = await retry('lint tooltip', 3, async () => {
      await page.mouse.move(10, 10);
      // on `delta`, not `add_`: pylsp's hover request for `add_` (jedi reading torch) takes it 20-40 s here,
      // and jupyterlab-lsp asks nothing else until it is answered
      const box = await textBox(cells.nth(1), 'delta.add_', 'delta');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
      const tip = page.locator('.cm-tooltip-lint').first();
      await tip.waitFor({ state: 'visible', timeout: 10000 });
      return tip.innerText();
    });
    log(`lint tooltip: ${JSON.stringify(lintText)}`);
    await shot('jupyterlab-03-message');
    check(lintText.includes('`delta` is a leaf tensor that requires grad') && lintText.includes('the in-place `add_()` here raises at once')
      && /gradguard/.test(lintText), 'the squiggle says GG101\'s message, from gradguard');

    // ---- cell numbers: JupyterLab's own count of cells, the message, the diagnostics panel and the CLI agree ----
    // JupyterLab's status bar says 'Cell 2/3' while a cell is active, counting every cell as VS Code's does
    const labCellOf = (cell, lineText) => retry(`the status bar's cell of '${lineText}'`, 3, async () => {
      await cell.locator('.cm-line', { hasText: lineText }).first().click();
      const item = page.locator('.jp-StatusBar-Item', { hasText: /^\s*Cell \d+\/\d+\s*$/ }).first();
      return waitFor(async () => {
        const m = ((await item.innerText().catch(() => '')) || '').trim().match(/^Cell (\d+)\/(\d+)$/);
        return m && m[0];
      }, 15000, 'a Cell N/M status bar item');
    });
    const createdShown = await labCellOf(cells.nth(0), 'delta = torch.zeros_like');
    const bugShown = await labCellOf(cells.nth(1), 'delta.add_(');
    log(`JupyterLab's status bar: '${createdShown}' where delta is made, '${bugShown}' where it is written`);
    check(createdShown === 'Cell 2/3' && bugShown === 'Cell 3/3', 'JupyterLab counts the markdown cell');
    const createdCell = Number(createdShown.split(/[ /]/)[1]);
    const bugCell = Number(bugShown.split(/[ /]/)[1]);
    check(lintText.includes(`(created on line 9 of cell ${createdCell})`), `the message names the cell as JupyterLab counts it (${JSON.stringify(lintText)})`);
    const cli = spawnSync(PYTHON, ['-m', 'gradguard', 'check', '--no-cache', '--format', 'json', 'pgd.ipynb'], { cwd: root, encoding: 'utf8' });
    const [cliFinding] = JSON.parse(cli.stdout);
    log(`gradguard check pgd.ipynb: cell ${cliFinding.cell} row ${cliFinding.location.row}: ${cliFinding.message}`);
    check(cliFinding.cell === bugCell && cliFinding.message.includes(`line 9 of cell ${createdCell}`), 'the CLI names the same cells');
    await page.evaluate(() => window.jupyterapp.commands.execute('lsp:show-diagnostics-panel'));
    const panelRow = await waitFor(() => page.evaluate(() => {
      const table = document.querySelector('.lsp-diagnostics-listing');
      if (!table) return null;
      const heads = [...table.querySelectorAll('th')].map((th) => th.textContent.trim());
      const rows = [...table.querySelectorAll('tbody tr')].map((tr) => Object.fromEntries(
        [...tr.querySelectorAll('td')].map((td, i) => [heads[i], td.textContent.trim()])));
      return rows.find((r) => r.Code === 'GG101') || null;
    }), LONG, 'the GG101 row of the diagnostics panel');
    log(`diagnostics panel: ${JSON.stringify(panelRow)}`);
    await shot('jupyterlab-03b-diagnostics-panel');
    // the panel's Line:Ch is 0-based (CodeMirror's position in the cell), the CLI's row and column 1-based
    check(Number(panelRow.Cell) === cliFinding.cell
      && panelRow['Line:Ch'] === `${cliFinding.location.row - 1}:${cliFinding.location.column - 1}`,
      `jupyterlab-lsp's panel puts the finding in the CLI's cell and line (${JSON.stringify(panelRow)})`);
    mark('cellNumbersAgree');

    // hover on the tensor where it is used (Ctrl held, in the cell's editor): gradguard's facts about it
    const endBox = await textBox(cells.nth(1), 'delta.grad.zero_()', ')');
    await page.mouse.click(endBox.x + endBox.width + 30, endBox.y + endBox.height / 2);
    const hoverOn = (lineText, word, pattern, timeout) => retry(`hover on ${word}`, 3, async () => {
      await page.mouse.move(10, 10);
      await sleep(300);
      const box = await textBox(cells.nth(1), lineText, word);
      // Ctrl held, the mouse coming onto the word: jupyterlab-lsp asks, and shows the answer when the mouse comes
      // back with it in hand (an answer that comes late is kept, not shown), so the mouse goes off and on again
      const tip = page.locator('.lsp-hover', { hasText: pattern }).first();
      await page.keyboard.down('Control');
      try {
        await waitFor(async () => {
          await page.mouse.move(box.x + box.width / 2, box.y - 12, { steps: 2 });  // the line above: no word
          await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 2 });
          return tip.waitFor({ state: 'visible', timeout: 1500 }).then(() => true, () => false);
        }, timeout, `a hover matching ${pattern}`, 0);
        await sleep(300);
        return await tip.innerText();
      } finally {
        await page.keyboard.up('Control');
      }
    });
    const tensorHover = await hoverOn('model(x + delta)', 'delta', /tensor · leaf/, 20000);
    mark('tensorHover');
    log(`hover on delta: ${JSON.stringify(tensorHover)}`);
    await shot('jupyterlab-04-hover');
    check(tensorHover.includes('delta — tensor · leaf · requires_grad=True')
      && tensorHover.includes('created on line 9 of cell 2') && tensorHover.includes('torch.zeros_like(..., requires_grad=True)'),
    'hovering delta shows it is a leaf that requires grad, made by torch.zeros_like on line 9 of cell 2');

    if (!ALONE) {
      // the user's own server still answers: pylsp's hover for a builtin gradguard says nothing about
      const builtinHover = await hoverOn('for step in range(3)', 'range', /range\(stop\) -> range object/, 40000);
      mark('pylspHover');
      log(`hover on range: ${JSON.stringify(builtinHover.slice(0, 200))}`);
      await shot('jupyterlab-05-pylsp-hover');
      check(builtinHover.includes('range(stop) -> range object'), "pylsp (behind gradguard) answers the hover on range() with its docstring");
    }

    // the notebook run in its kernel: `%load_ext gradguard` (the first line of cell 2) traces the cells, and the
    // report names the cell and line the checker named
    await page.evaluate(() => window.jupyterapp.commands.execute('notebook:run-all-cells'));
    const traceText = await waitFor(() => cells.nth(1).locator('.jp-OutputArea-output').allInnerTexts()
      .then((texts) => texts.join('\n')).then((t) => (/gradguard trace: error/.test(t) ? t : null)), 180000, 'the tracer\'s report in cell 3', 1000);
    mark('tracerReport');
    await shot('jupyterlab-055-tracer');
    const traced = traceText.match(/line (\d+) of cell (\d+)\s+delta\.add_\(/);
    log(`tracer: ${JSON.stringify(traceText.slice(traceText.indexOf('gradguard trace: error'), traceText.indexOf('gradguard trace: error') + 400))}`);
    check(traced && Number(traced[2]) === cliFinding.cell && Number(traced[1]) === cliFinding.location.row && !/In\[\d+\]/.test(traceText.split('gradguard trace: error')[1]),
      'the tracer names the write as line 4 of cell 3, as the checker and JupyterLab do');

    // the file editor: a .py file gets the same squiggle
    await page.locator('.jp-DirListing-item', { hasText: 'leaf_inplace.py' }).dblclick();
    const fileSquiggle = page.locator('.jp-FileEditor .cm-lintRange');
    await fileSquiggle.first().waitFor({ state: 'visible', timeout: LONG });
    mark('fileEditorSquiggle');
    await shot('jupyterlab-06-file-editor');
    const fileSquiggles = await fileSquiggle.allInnerTexts();
    log(`file editor squiggles: ${JSON.stringify(fileSquiggles)}`);
    check(JSON.stringify(fileSquiggles) === '["w += 1"]', 'the file editor underlines `w += 1` in leaf_inplace.py');
  } finally {
    if (page) await page.screenshot({ path: path.join(SHOTS, 'jupyterlab-99-last.png') }).catch(() => {});
    if (browser) await browser.close().catch(() => {});
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      try { process.kill(-lab.pid, signal); } catch (_) { /* already gone */ }
      await sleep(1000);
    }
  }
  console.log('RESULT ' + JSON.stringify({ ok: true, timings }));
}

main().catch((e) => {
  console.log(String((e && e.stack) || e));
  console.log('RESULT ' + JSON.stringify({ ok: false, error: String((e && e.message) || e), timings }));
  process.exit(1);
});
