#!/usr/bin/env node
/**
 * Bundles the CLI for node from the built JavaScript in dist/ (run after tsc): dist/cli/svc.mjs,
 * which bin/svc.js runs, and the text worker, dist/cli/text-worker.mjs. Loading some 400 ES module
 * files took most of a command's start-up; a bundle split by command loads a few files instead,
 * and each command still loads only what it uses (see cli/commandTable.ts). Packages with native
 * addons, which find their addon beside their own files, stay in node_modules.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'cli');
const ENTRIES = { svc: 'cli/bundle/start.js', 'text-worker': 'engine/text/textWorker.js' };
/** native addons (lmdb brings msgpackr's), and the local-model embedder's packages */
const EXTERNAL = ['lmdb', 'msgpackr', 'usearch', '@duckdb/*', '@napi-rs/keyring', 'onnxruntime-node', '@huggingface/tokenizers'];
const started = Date.now();

for (const f of Object.values(ENTRIES)) if (!existsSync(join(DIST, f))) fail(`dist/${f} is missing: run \`tsc -p tsconfig.build.json\` first`);

// what an earlier build split off: chunk names change with their contents
rmSync(join(OUT, 'chunks'), { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, f]) => [name, join(DIST, f)])),
  outdir: OUT,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  mainFields: ['module', 'main'],
  external: EXTERNAL,
  logLevel: 'error',
  legalComments: 'none',
  metafile: true,
  plugins: [namedExportsOfCommonJs()],
  // the CommonJS packages bundled in require Node's own modules, which an ES module must ask createRequire for
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
});
if (result.errors.length) fail('bundling failed');

const files = Object.keys(result.metafile.outputs);
const kb = (n) => `${Math.round(n / 1024)} KB`;
const size = (f) => result.metafile.outputs[f].bytes;
console.error(`build-cli: dist/cli/svc.mjs ${kb(size(files.find((f) => f.endsWith('cli/svc.mjs'))))} and ${files.length - 1} more files, ${kb(files.reduce((n, f) => n + size(f), 0))} in all, in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/**
 * A package loaded with import() is a chunk of its own; when it is CommonJS, esbuild gives that chunk
 * a default export only, where Node also gives the names module.exports holds (`const { request } =
 * await import('undici')`). Such an import goes through a module that exports each of those names.
 */
function namedExportsOfCommonJs() {
  return {
    name: 'svc-named-exports-of-commonjs',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async ({ path, kind, resolveDir, pluginData }) => {
        if (kind !== 'dynamic-import' || path.startsWith('node:') || pluginData?.inner) return undefined;
        const found = await build.resolve(path, { kind, resolveDir, pluginData: { inner: true } });
        if (found.errors.length > 0 || found.external || !isCommonJs(found.path)) return undefined;
        return { path: found.path, namespace: 'svc-named-exports' };
      });
      build.onLoad({ filter: /.*/, namespace: 'svc-named-exports' }, ({ path }) => {
        const names = Object.keys(createRequire(path)(path)).filter((n) => n !== 'default');
        const lines = [`import * as ns from ${JSON.stringify(path)};`, 'export default ns.default;'];
        names.forEach((n, i) => lines.push(`const n${i} = ns[${JSON.stringify(n)}];`, `export { n${i} as ${JSON.stringify(n)} };`));
        return { contents: lines.join('\n'), resolveDir: dirname(path), loader: 'js' };
      });
    },
  };
}

/** A .cjs file, or a .js one whose package is not `"type": "module"`. */
function isCommonJs(file) {
  if (/\.cjs$/.test(file)) return true;
  if (!/\.js$/.test(file)) return false;
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) return JSON.parse(readFileSync(pkg, 'utf8')).type !== 'module';
  }
  return true;
}

function fail(message) {
  console.error(`build-cli: ${message}`);
  process.exit(1);
}
