// Builds the web console (src/console) into dist/console: index.html, app.js and app.css
// (uPlot's stylesheet inlined ahead of the console's own). Type-checks first; any error fails the build.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src/console');
const OUT = join(ROOT, 'dist/console');

const tsc = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(SRC, 'tsconfig.json')], { stdio: 'inherit' });
if (tsc.status !== 0) {
  console.error('build-console: type errors in src/console');
  process.exit(1);
}

mkdirSync(OUT, { recursive: true });
await build({
  entryPoints: [join(SRC, 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2020',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(OUT, 'app.js'),
  legalComments: 'none',
  logLevel: 'warning',
});
const uplotCss = readFileSync(join(ROOT, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
writeFileSync(join(OUT, 'app.css'), `${uplotCss}\n${readFileSync(join(SRC, 'app.css'), 'utf8')}`);
copyFileSync(join(SRC, 'index.html'), join(OUT, 'index.html'));
console.error(`build-console: ${OUT.slice(ROOT.length + 1)} built`);
