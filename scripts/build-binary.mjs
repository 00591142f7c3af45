#!/usr/bin/env node
/**
 * Builds dist/bin/svc, one Linux x64 executable: Node's single-executable support with the CLI
 * bundled into one CommonJS file, and as assets every native addon svc loads (onnxruntime's among
 * them), the text and onnx workers (bundled the same way) and the builtin embedder's word vectors.
 * Run after `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { binaryInputs, STAMP } from './binary-inputs.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'sea');
const BINARY = join(DIST, 'bin', 'svc');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const started = Date.now();
const ONNX_WORKER = 'engine/vector/embedders/onnx/onnxWorker.js';

if (process.platform !== 'linux' || process.arch !== 'x64') fail(`builds for Linux x64 only (this is ${process.platform}-${process.arch})`);
if (process.report?.getReport().header.glibcVersionRuntime === undefined) fail('builds against glibc only');
for (const f of ['cli/sea/start.js', 'engine/text/textWorker.js', ONNX_WORKER]) if (!existsSync(join(DIST, f))) fail(`dist/${f} is missing: run \`npm run build\` first`);

// ---- the assets ----------------------------------------------------------------------------------

/** A package's directory as Node's lookup finds it from `fromPkg`'s (or the project's): exports maps may hide package.json. */
function from(pkg, fromPkg) {
  for (let dir = fromPkg ? from(fromPkg) : ROOT; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', pkg);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) fail(`package ${pkg} not found${fromPkg ? ` from ${fromPkg}` : ''}`);
  }
}
/** The addon node-gyp-build-optional-packages would pick: this Node's ABI build, else the N-API one. */
const gypPrebuild = (dir) => [`node.abi${process.versions.modules}.glibc.node`, 'node.napi.glibc.node'].map((f) => join(dir, f)).find(existsSync) ?? fail(`no Linux x64 addon in ${dir}`);

const duckdbDir = from('@duckdb/node-bindings-linux-x64', '@duckdb/node-bindings');
const onnxDir = join(from('onnxruntime-node'), 'bin', 'napi-v6', 'linux', 'x64');
/** name in the executable → file on disk */
const natives = {
  'lmdb.node': gypPrebuild(from('@lmdb/lmdb-linux-x64', 'lmdb')),
  'msgpackr-extract.node': gypPrebuild(from('@msgpackr-extract/msgpackr-extract-linux-x64', 'msgpackr-extract')),
  'usearch.node': join(from('usearch'), 'prebuilds', 'linux-x64', 'usearch.node'),
  'duckdb.node': join(duckdbDir, 'duckdb.node'),
  'libduckdb.so': join(duckdbDir, 'libduckdb.so'),
  'keyring.node': join(from('@napi-rs/keyring-linux-x64-gnu', '@napi-rs/keyring'), 'keyring.linux-x64-gnu.node'),
  // the onnx worker's: the binding finds libonnxruntime.so.1 beside it ($ORIGIN)
  'onnxruntime_binding.node': join(onnxDir, 'onnxruntime_binding.node'),
  'libonnxruntime.so.1': join(onnxDir, 'libonnxruntime.so.1'),
};
const NEEDS = { 'duckdb.node': ['libduckdb.so'], 'onnxruntime_binding.node': ['libonnxruntime.so.1'] };
/** addons only a worker loads: unpacked when that worker first starts */
const WORKER_ONLY = ['onnxruntime_binding.node', 'libonnxruntime.so.1'];

const vectors = join(ROOT, 'build', 'embeddings', 'wink-sg-100d.bin');
if (!existsSync(vectors)) {
  const { buildEmbeddings } = await import('./build-embeddings.mjs');
  buildEmbeddings(vectors);
}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const described = (file, needs) => ({ size: statSync(file).size, sha256: sha256(file), ...(needs?.length ? { needs } : {}) });

// ---- bundling --------------------------------------------------------------------------------------

/**
 * Swaps each lookup of a native addon for a load of the executable's own copy. In the CLI the copy
 * is unpacked on first need; the text worker runs from the cache dir, so its addons are its siblings.
 */
function nativeAddons(role, used) {
  const NATIVE = join(DIST, 'cli', 'sea', 'native.js');
  const ASSETS = join(DIST, 'cli', 'sea', 'assets.js');
  /** `lookup`: the module imported is node-gyp-build's function of a directory, not the addon */
  const addon = (name, lookup = false) => ({ path: name, namespace: 'svc-native', pluginData: { lookup } });
  const inside = (importer, pkg) => importer.includes(`${join('node_modules', pkg)}/`);
  return {
    name: 'svc-native',
    setup(build) {
      build.onResolve({ filter: /^node-gyp-build-optional-packages$/ }, ({ importer }) => {
        if (inside(importer, 'lmdb')) return addon('lmdb.node', true);
        if (inside(importer, 'msgpackr-extract')) return addon('msgpackr-extract.node', true);
        fail(`unexpected native addon lookup from ${importer}`);
      });
      build.onResolve({ filter: /^node-gyp-build$/ }, ({ importer }) => (inside(importer, 'usearch') ? addon('usearch.node', true) : fail(`unexpected native addon lookup from ${importer}`)));
      // usearch asks `bindings` for its own directory only if __dirname is unset: it never is
      build.onResolve({ filter: /^bindings$/ }, ({ importer }) => (inside(importer, 'usearch') ? { path: 'bindings', namespace: 'svc-stub' } : undefined));
      build.onResolve({ filter: /^@duckdb\/node-bindings-linux-x64\/duckdb\.node$/ }, () => addon('duckdb.node'));
      build.onResolve({ filter: /^svc-onnxruntime-binding$/ }, () => addon('onnxruntime_binding.node'));
      build.onResolve({ filter: /^(\.\/keyring\.linux-x64-gnu\.node|@napi-rs\/keyring-linux-x64-gnu)$/ }, () => addon('keyring.node'));
      // any other addon or platform package: absent here, and looked up only on other platforms or in a try
      build.onResolve({ filter: /\.node$|^@duckdb\/node-bindings-|^@napi-rs\/keyring-/ }, ({ path }) => (path === '@napi-rs/keyring-linux-x64-gnu/package.json' ? undefined : { path, external: true }));
      build.onLoad({ filter: /.*/, namespace: 'svc-stub' }, () => ({ contents: 'module.exports = { getRoot: () => "", getFileName: () => "" };', loader: 'js' }));
      build.onLoad({ filter: /.*/, namespace: 'svc-native' }, ({ path: name, pluginData }) => {
        used.add(name);
        const file = role === 'cli' ? `require(${JSON.stringify(ASSETS)}).assetFile(${JSON.stringify(name)})` : `require("node:path").join(__dirname, ${JSON.stringify(name)})`;
        const load = `require(${JSON.stringify(NATIVE)}).loadAddon(${file})`;
        return { contents: pluginData.lookup ? `module.exports = () => ${load};` : `module.exports = ${load};`, loader: 'js', resolveDir: ROOT };
      });
    },
  };
}

/** The CLI's entry awaits at its top level, which CommonJS cannot: its statements run in an async function instead. */
const topLevelAwait = {
  name: 'svc-top-level-await',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/]cli[\\/]main\.js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      const imports = /^(?:\s*import\s+(?:[^'";]*?\sfrom\s*)?(['"])[^'"]+\1;?)*/.exec(source)[0];
      const body = source.slice(imports.length);
      if (/^\s*import[\s{*]/m.test(body)) fail('dist/cli/main.js: an import after its statements begin');
      return { contents: `${imports}\n(async () => {\n${body}\n})();\n`, loader: 'js' };
    });
    // usearch looks for its build directory before it asks node-gyp-build for the addon
    build.onLoad({ filter: /[\\/]usearch[\\/]javascript[\\/]dist[\\/](cjs|esm)[\\/]usearch\.js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      const arg = 'getBuildDir(getDirName())';
      if (!source.includes(arg)) fail('usearch: its addon lookup was not found');
      return { contents: source.replace(arg, '""'), loader: 'js' };
    });
    // onnxruntime-node names its addon by platform in a template string: this build's is the Linux x64 one
    build.onLoad({ filter: /[\\/]onnxruntime-node[\\/]dist[\\/]binding\.js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      const call = 'require(`../bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`)';
      if (!source.includes(call)) fail('onnxruntime-node: its addon lookup was not found');
      return { contents: source.replace(call, "require('svc-onnxruntime-binding')"), loader: 'js' };
    });
    // the keyring is loaded through createRequire, which a bundle cannot follow
    build.onLoad({ filter: /[\\/]dist[\\/]cli[\\/]credentials\.js$/ }, ({ path }) => {
      const source = readFileSync(path, 'utf8');
      const call = "createRequire(import.meta.url)('@napi-rs/keyring')";
      if (!source.includes(call)) fail('dist/cli/credentials.js: the keyring load was not found');
      return { contents: source.replace(call, "require('@napi-rs/keyring')"), loader: 'js' };
    });
  },
};

async function bundle(entry, outfile, role, manifest) {
  const used = new Set();
  const result = await esbuild.build({
    entryPoints: [join(DIST, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    mainFields: ['main', 'module'],
    conditions: ['require', 'node'],
    logLevel: 'error',
    legalComments: 'none',
    // ESM sources ask import.meta for their own location: in the executable that is the executable
    banner: { js: 'var __svc_import_meta_url = require("node:url").pathToFileURL(__filename).href, __svc_import_meta_dirname = __dirname;' },
    define: {
      'import.meta.url': '__svc_import_meta_url',
      'import.meta.dirname': '__svc_import_meta_dirname',
      ...(manifest ? { __SVC_SEA_MANIFEST__: JSON.stringify(manifest) } : {}),
    },
    plugins: [nativeAddons(role, used), topLevelAwait],
  });
  if (result.errors.length) fail('bundling failed');
  return [...used];
}

mkdirSync(OUT, { recursive: true });
mkdirSync(dirname(BINARY), { recursive: true });
rmSync(join(ROOT, STAMP), { force: true });
const inputs = binaryInputs(ROOT);
const workerFile = join(OUT, 'text-worker.cjs');
const workerNeeds = await bundle('engine/text/textWorker.js', workerFile, 'worker');
const onnxWorkerFile = join(OUT, 'onnx-worker.cjs');
const onnxWorkerNeeds = await bundle(ONNX_WORKER, onnxWorkerFile, 'worker');

// the web console's page and scripts, served from memory (never unpacked)
const consoleDir = join(DIST, 'console');
if (!existsSync(join(consoleDir, 'index.html'))) fail('dist/console is not built: run `npm run build`');
const consoleFiles = Object.fromEntries(readdirSync(consoleDir).map((name) => [`console/${name}`, join(consoleDir, name)]));
const files = { ...natives, 'text-worker.cjs': workerFile, 'onnx-worker.cjs': onnxWorkerFile, 'wink-sg-100d.bin': vectors, ...consoleFiles };
const workers = { 'text-worker.cjs': workerNeeds, 'onnx-worker.cjs': onnxWorkerNeeds };
const assets = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, described(file, workers[name]?.sort() ?? NEEDS[name])]));
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
const build = createHash('sha256').update(JSON.stringify(assets)).digest('hex').slice(0, 12);
const manifest = { version, build, assets };
writeFileSync(join(OUT, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');

const main = join(OUT, 'svc.cjs');
const cliNatives = await bundle('cli/sea/start.js', main, 'cli', manifest);
const missing = Object.keys(natives).filter((n) => !NEEDS['duckdb.node'].includes(n) && !WORKER_ONLY.includes(n) && !cliNatives.includes(n));
if (!onnxWorkerNeeds.includes('onnxruntime_binding.node')) fail('the onnx worker bundle never loads onnxruntime_binding.node');
if (missing.length) fail(`the CLI bundle never loads ${missing.join(', ')}`);

// ---- the executable --------------------------------------------------------------------------------

const blob = join(OUT, 'sea-prep.blob');
const config = { main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true, assets: files };
writeFileSync(join(OUT, 'sea-config.json'), JSON.stringify(config, null, 2) + '\n');
run(process.execPath, ['--experimental-sea-config', join(OUT, 'sea-config.json')]);

rmSync(BINARY, { force: true });
copyFileSync(process.execPath, BINARY);
chmodSync(BINARY, 0o755);
// stripped before the blob goes in: strip would drop the section postject adds
if (spawnSync('strip', ['--version'], { stdio: 'ignore' }).status === 0) run('strip', [BINARY]);
run(process.execPath, [join(from('postject'), 'dist', 'cli.js'), BINARY, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE]);
rmSync(blob, { force: true });
writeFileSync(join(ROOT, STAMP), `${inputs}\n`);

const mb = (n) => `${(n / 2 ** 20).toFixed(1)} MB`;
console.error(`svc: ${relative(ROOT, BINARY)} ${mb(statSync(BINARY).size)} (bundle ${mb(statSync(main).size)}, ${Object.keys(files).length} assets ${mb(Object.values(assets).reduce((n, a) => n + a.size, 0))}, build ${build}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/** Runs a step quietly; its output is shown only when it fails. */
function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}${r.stderr}`);
}

function fail(message) {
  console.error(`build-binary: ${message}`);
  process.exit(1);
}
