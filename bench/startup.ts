/**
 * Start-up: `node -e 0` as the floor, the CLI under node, and the single executable (dist/bin/svc,
 * built if it is missing or stale) copied away from the project: its first run, which unpacks its
 * addons into an empty cache dir, and warm runs; and a first SQL query, which also unpacks DuckDB.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixed, printTable } from './lib/table.js';
import { ROOT, SVC } from './lib/paths.js';
import { mb, quantile } from './lib/stats.js';
import { tempDir } from './lib/svc.js';

const RUNS = 10;
const BINARY = join(ROOT, 'dist/bin/svc');

interface Inputs { binaryInputs: (root: string) => string; STAMP: string }

async function ensureBinary(): Promise<void> {
  const { binaryInputs, STAMP } = (await import(pathToFileURL(join(ROOT, 'scripts/binary-inputs.mjs')).href)) as Inputs;
  const stamp = join(ROOT, STAMP);
  if (existsSync(BINARY) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === binaryInputs(ROOT)) return;
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-binary.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('building dist/bin/svc failed');
}

export async function startupBench(): Promise<void> {
  await ensureBinary();
  const dir = tempDir('svc-bench-startup-');
  try {
    const binary = join(dir.path, 'bin', 'svc');
    mkdirSync(join(dir.path, 'bin'));
    copyFileSync(BINARY, binary);
    const dataDir = join(dir.path, 'data');
    const baseEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '', SVC_PROFILE: '', SVC_KEYRING: 'off', XDG_CONFIG_HOME: join(dir.path, 'config') };
    const warmCache = join(dir.path, 'cache');
    let coldCaches = 0;

    /** Wall time of one run, in ms; `cache` is the executable's XDG_CACHE_HOME. */
    const time = (cmd: string, args: string[], cache = warmCache): number => {
      const started = performance.now();
      const r = spawnSync(cmd, args, { cwd: dir.path, env: { ...baseEnv, XDG_CACHE_HOME: cache }, encoding: 'utf8' });
      const ms = performance.now() - started;
      if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
      return ms;
    };
    const runs = (one: () => number) => {
      one(); // a first run reads the files into the page cache
      return Array.from({ length: RUNS }, one);
    };
    const row = (label: string, samples: number[]) => [label, fixed(quantile(samples, 0.5)), fixed(Math.min(...samples)), fixed(Math.max(...samples)), samples.length];

    time(process.execPath, [SVC, 'init', '--yes']);
    const rows = [
      row('node -e 0', runs(() => time(process.execPath, ['-e', '0']))),
      row('node bin/svc.js --version', runs(() => time(process.execPath, [SVC, '--version']))),
      row('node bin/svc.js datasets list', runs(() => time(process.execPath, [SVC, 'datasets', 'list']))),
      row('svc --version, first run (unpacks)', runs(() => time(binary, ['--version'], join(dir.path, `cold-${coldCaches++}`)))),
      row('svc --version, warm', runs(() => time(binary, ['--version']))),
      row('svc datasets list, warm', runs(() => time(binary, ['datasets', 'list']))),
      row('node bin/svc.js sql "SELECT 42"', runs(() => time(process.execPath, [SVC, 'sql', 'SELECT 42']))),
      row('svc sql "SELECT 42", first run (unpacks DuckDB)', runs(() => time(binary, ['sql', 'SELECT 42'], join(dir.path, `cold-${coldCaches++}`)))),
      row('svc sql "SELECT 42", warm', runs(() => time(binary, ['sql', 'SELECT 42']))),
    ];
    printTable(`Start-up, median of ${RUNS} runs (executable ${mb(statSync(BINARY).size)}, run from ${dir.path})`, ['command', 'median ms', 'min ms', 'max ms', 'runs'], rows);
  } finally {
    dir.remove();
  }
}
