// Bundles src/extension.ts and its dependencies into dist/extension.js (vscode stays external), and writes
// dist/THIRD_PARTY_NOTICES.txt: the licence of every npm package the bundle contains (minifying drops the notices
// their MIT and ISC licences ask to keep with every copy; the VSIX ships this file beside the bundle).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const options = {
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  minify: production,
  sourcemap: !production,
  logLevel: 'info',
  metafile: true,
};

const NOTICES = 'dist/THIRD_PARTY_NOTICES.txt';

// The folder of each package the bundle took code from (a nested copy is its own package).
function bundledPackages(metafile) {
  const folders = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const match = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
    if (match) folders.add(match[1]);
  }
  return [...folders].sort();
}

function writeNotices(metafile) {
  const sections = [];
  for (const folder of bundledPackages(metafile)) {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'));
    const licence = fs.readdirSync(folder).filter((name) => /^licen[cs]e/i.test(name)).sort()[0];
    if (!licence) {
      throw new Error(`${folder}: no LICENSE file; its notice cannot be shipped (${NOTICES})`);
    }
    const text = fs.readFileSync(path.join(folder, licence), 'utf8').trim();
    sections.push(`${manifest.name} ${manifest.version} (${manifest.license})\n\n${text}\n`);
  }
  const head = 'gradguard for VS Code bundles the npm packages below into dist/extension.js; their licences follow.\n'
    + 'The Python packages under bundled/libs carry their licences in their *.dist-info folders.\n';
  fs.writeFileSync(NOTICES, [head, ...sections].join(`\n${'='.repeat(78)}\n\n`));
  return sections.length;
}

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  const result = await esbuild.build(options);
  const count = writeNotices(result.metafile);
  console.log(`${NOTICES}: ${count} packages`);
}
