/**
 * Reopen at 1M records: a dataset of a million log lines is built and closed in one process, then a
 * fresh process opens the data dir and searches once, which is what a user waits for after a restart.
 */
import { spawnSync } from 'node:child_process';
import MiniSearch from 'minisearch';
import { createReadStream, createWriteStream, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Engine } from '../src/engine/index.js';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { LiveSegment } from '../src/engine/text/liveSegment.js';
import { LOGHUB, repeatLines } from './ingest.js';
import { mb } from './lib/stats.js';
import { tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const RECORDS = Number(process.env.SVC_BENCH_REOPEN_RECORDS ?? 1_000_000);
const QUERY = 'authentication failure';
const OPTIONS = { idField: 'seq', fields: ['title', 'body'], tokenize, processTerm: normalizeTerm };

const seconds = (since: number) => (performance.now() - since) / 1000;

function files(path: string): string[] {
  return statSync(path).isDirectory() ? readdirSync(path).flatMap((f) => files(join(path, f))) : [path];
}
const size = (paths: string[]) => paths.reduce((n, f) => n + statSync(f).size, 0);
const textSnapshot = (dir: string) => files(join(dir, 'data', 'indexes')).find((f) => /\/text\.snapshot$/.test(f))!;

async function build(dir: string): Promise<Record<string, number>> {
  const file = join(dir, 'logs.log');
  const out = createWriteStream(file);
  for (const line of repeatLines(LOGHUB, RECORDS)) if (!out.write(line + '\n')) await new Promise<void>((ok) => out.once('drain', () => ok()));
  out.end();
  await finished(out);
  const engine = await Engine.open(join(dir, 'data'));
  await engine.init('bench', 'admin@localhost');
  const caller = engine.localCaller();
  await engine.datasets.create(caller, { dataset_id: 'logs' });
  let started = performance.now();
  const run = await engine.ingest.submit(caller, createReadStream(file, { highWaterMark: 1 << 20 }), { dataset_id: 'logs', format: 'text', filename: 'logs.log' });
  const done = await engine.ingest.wait(caller, run.ingest_run_id);
  if (done.status !== 'ready' || done.documents.parsed !== RECORDS) throw new Error(`ingest: ${JSON.stringify(done)}`);
  const ingest = seconds(started);
  const textReady = (Date.parse(done.text_indexed_at!) - Date.parse(done.created_at)) / 1000;
  const rss = process.memoryUsage().rss;
  started = performance.now();
  await engine.close();
  return { ingest, textReady, close: seconds(started), rss };
}

async function reopen(dir: string): Promise<Record<string, number>> {
  const rssBefore = process.memoryUsage().rss;
  let started = performance.now();
  const engine = await Engine.open(join(dir, 'data'));
  const open = seconds(started);
  const caller = engine.localCaller();
  started = performance.now();
  const first = await engine.search.run(caller, { text: QUERY, datasets: ['logs'], limit: 10 });
  const firstSearch = seconds(started);
  started = performance.now();
  await engine.search.run(caller, { text: QUERY, datasets: ['logs'], limit: 10 });
  const secondSearch = seconds(started);
  const rss = process.memoryUsage().rss;
  await engine.close();
  return { open, firstSearch, secondSearch, hits: first.total.value, rssBefore, rss };
}

const readLive = (dir: string) => LiveSegment.read(textSnapshot(dir), OPTIONS.fields, (rec, f) => (f === 0 ? rec.title : rec.body)).live;

/** The part of the first search spent loading the text snapshot (the in-memory segment), measured alone. */
function load(dir: string): Record<string, number> {
  const started = performance.now();
  readLive(dir);
  return { load: seconds(started), rss: process.memoryUsage().rss };
}

/** The baseline: the records the snapshot holds (the newest ones) indexed by MiniSearch and written as its own JSON. */
function writeJson(dir: string): Record<string, number> {
  const docs = readLive(dir).docs;
  const mini = new MiniSearch(OPTIONS);
  mini.addAll(repeatLines(LOGHUB, RECORDS).slice(RECORDS - docs).map((body, i) => ({ seq: RECORDS - docs + i + 1, title: '', body })));
  writeFileSync(join(dir, 'minisearch.json'), JSON.stringify(mini));
  return { bytes: statSync(join(dir, 'minisearch.json')).size };
}

/** …and loaded by MiniSearch.loadJSON. */
function loadJson(dir: string): Record<string, number> {
  const started = performance.now();
  MiniSearch.loadJSON(readFileSync(join(dir, 'minisearch.json'), 'utf8'), OPTIONS);
  return { load: seconds(started), rss: process.memoryUsage().rss };
}

const PHASES = { build, reopen, load, writeJson, loadJson };

/** Runs one phase in a fresh Node process, so each one's time and memory are its own. */
function child(phase: keyof typeof PHASES, dir: string): Record<string, number> {
  const r = spawnSync(process.execPath, [import.meta.filename, phase, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`reopen bench, ${phase} phase, exited ${r.status}`);
  return JSON.parse(r.stdout);
}

export async function reopenBench(): Promise<void> {
  const dir = tempDir('svc-bench-reopen-');
  try {
    const b = child('build', dir.path);
    const r = child('reopen', dir.path);
    const l = child('load', dir.path);
    const json = child('writeJson', dir.path);
    const lj = child('loadJson', dir.path);
    const data = join(dir.path, 'data');
    const snapshot = statSync(textSnapshot(dir.path)).size;
    const n = RECORDS.toLocaleString('en');
    printTable(`d. reopen: ${n} log records`, ['step', 'value'], [
      ['ingest to text-ready (in process)', `${fixed(b.textReady, 1)} s, ${Math.round(RECORDS / b.textReady).toLocaleString('en')} lines/s`],
      ['ingest.wait()', `${fixed(b.ingest, 1)} s`],
      ['close (background work, snapshot)', `${fixed(b.close, 1)} s`],
      ['RSS after ingest', mb(b.rss)],
      ['on disk: LMDB store / text snapshot / other indexes', `${mb(size(files(join(data, 'meta'))))} / ${mb(snapshot)} / ${mb(size(files(join(data, 'indexes'))) - snapshot)}`],
      ['Engine.open', `${fixed(r.open, 2)} s`],
      [`first search "${QUERY}"`, `${fixed(r.firstSearch, 2)} s (${r.hits.toLocaleString('en')} hits)`],
      ['reopen = open + first search', `${fixed(r.open + r.firstSearch, 2)} s`],
      ['  of which loading the in-memory segment\'s snapshot', `${fixed(l.load, 2)} s (alone, RSS ${mb(l.rss)})`],
      ['baseline: its records as MiniSearch JSON, loadJSON', `${fixed(lj.load, 2)} s (${mb(json.bytes)}, RSS ${mb(lj.rss)})`],
      ['second search', `${fixed(r.secondSearch * 1000, 0)} ms`],
      ['RSS before open / after reopen', `${mb(r.rssBefore)} / ${mb(r.rss)}`],
    ]);
  } finally {
    dir.remove();
  }
}

if (process.argv[1] === import.meta.filename) {
  const [phase, dir] = process.argv.slice(2);
  const result = await PHASES[phase as keyof typeof PHASES](dir);
  process.stdout.write(JSON.stringify(result));
}
