/** Ingest to text-ready: the CLI, the engine in process, and plain MiniSearch over the same log lines. */
import MiniSearch from 'minisearch';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IngestRun } from '../src/api/ingest.js';
import { Engine } from '../src/engine/index.js';
import { DATA } from './lib/paths.js';
import { svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

export const LOGHUB = ['Apache', 'BGL', 'HDFS', 'Linux', 'OpenSSH', 'OpenStack'].map((n) => join(DATA, 'loghub', n, `${n}_2k.log`));
const APACHE_ACCESS = join(DATA, 'ingest', 'apache_access_combined.log');
const TARGET_LINES = 90_000;

/** The lines of `files`, cycled until there are `total`. */
export function repeatLines(files: string[], total: number): string[] {
  const base = files.flatMap((f) => readFileSync(f, 'utf8').split(/\r?\n/).filter((l) => l !== ''));
  return Array.from({ length: total }, (_, i) => base[i % base.length]);
}

/** From the run's creation (before its object is stored) to its records being searchable as text. */
const textReady = (run: IngestRun) => (Date.parse(run.text_indexed_at!) - Date.parse(run.created_at)) / 1000;

function check(run: IngestRun, lines: number): IngestRun {
  if (run.status !== 'ready' || run.documents.parsed !== lines || !run.text_indexed_at) throw new Error(`ingest run: ${JSON.stringify(run)}`);
  return run;
}

export async function ingestBench(): Promise<void> {
  const lines = repeatLines([...LOGHUB, APACHE_ACCESS], TARGET_LINES);
  const n = lines.length;
  const work = tempDir('svc-bench-ingest-');
  try {
    const file = join(work.path, 'logs.log');
    writeFileSync(file, lines.join('\n') + '\n');

    const cliDir = join(work.path, 'cli');
    svc(cliDir, ['init', '--yes']);
    svc(cliDir, ['datasets', 'create', 'logs']);
    const cli = svc(cliDir, ['ingest', 'logs', file, '--format', 'text', '--wait']);
    const cliRun = check(cli.out, n);
    // What any command pays before it does anything: process start, module load, data dir open.
    const idle = svc(cliDir, ['datasets', 'list']).seconds;

    const engine = await Engine.open(join(work.path, 'engine'));
    await engine.init('bench', 'admin@localhost');
    const caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'logs' });
    let started = performance.now();
    const submitted = await engine.ingest.submit(caller, createReadStream(file, { highWaterMark: 1 << 20 }), { dataset_id: 'logs', format: 'text', filename: 'logs.log' });
    const run = check(await engine.ingest.wait(caller, submitted.ingest_run_id), n);
    const waited = (performance.now() - started) / 1000;
    started = performance.now();
    await engine.close(); // finishes background work and writes the index snapshot, as the CLI does before it exits
    const close = (performance.now() - started) / 1000;

    started = performance.now();
    new MiniSearch({ fields: ['body'] }).addAll(lines.map((body, id) => ({ id, body })));
    const mini = (performance.now() - started) / 1000;

    const row = (name: string, s: number) => [name, fixed(s, 2), Math.round(n / s).toLocaleString('en'), `${fixed(mini / s, 2)}×`];
    printTable(`a. ingest: ${n.toLocaleString('en')} log lines, ${fixed(statSync(file).size / 2 ** 20, 1)} MB`, ['run', 'seconds', 'lines/s', 'svc / MiniSearch'], [
      row('svc ingest --wait, whole CLI process', cli.seconds),
      row('  of which to text-ready', textReady(cliRun)),
      row('engine in process, to text-ready', textReady(run)),
      row('engine in process, ingest.wait()', waited),
      row('engine in process, wait + close()', waited + close),
      row('MiniSearch addAll, body only', mini),
    ]);
    console.log(`CLI fixed cost (svc datasets list): ${fixed(idle, 2)} s; engine close() after the run: ${fixed(close, 2)} s`);
  } finally {
    work.remove();
  }
}
