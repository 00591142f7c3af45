/**
 * A 1M-line log file through a hosted multipart upload to `ready`, as a user runs it:
 * `svc ingest DATASET FILE --wait` against `svc serve`. Prints records/s and the server's peak RSS
 * (VmHWM), beside the same file ingested by the local engine (no server, no upload) in the same run.
 *
 *   npm run build && tsc -p bench/tsconfig.json && npm run bench -- upload-ingest (SVC_BENCH_SIZE=lines, default 1M)
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { DATA, SVC } from './lib/paths.js';
import { svc, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const peakRssMiB = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function makeLog(path: string, count: number): Promise<void> {
  const dir = join(DATA, 'loghub');
  const lines = readdirSync(dir).flatMap((s) => (s.endsWith('.txt') || s.endsWith('.md') ? [] : readFileSync(join(dir, s, `${s}_2k.log`), 'utf8').split('\r\n').filter(Boolean)));
  const out = createWriteStream(path);
  for (let i = 0; i < count; i++) if (!out.write(`${lines[i % lines.length]} #${i}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<void> {
  const count = Number(process.env.SVC_BENCH_SIZE ?? 1_000_000);
  const work = tempDir('svc-bench-upload-ingest-');
  try {
    const file = join(work.path, 'big.log');
    await makeLog(file, count);
    const rows: (string | number)[][] = [];

    const local = join(work.path, 'local');
    svc(local, ['init', '--yes']);
    svc(local, ['datasets', 'create', 'big', '--no-semantic']);
    const l = svc(local, ['ingest', 'big', file, '--format', 'text', '--wait']);
    rows.push(['local engine (no server)', count, fixed(l.seconds, 1), fixed(count / l.seconds, 0), '']);

    const remote = join(work.path, 'remote');
    const who = svc(remote, ['init', '--yes']).out;
    svc(remote, ['datasets', 'create', 'big', '--no-semantic']);
    const env = { ...process.env, SVC_DATA_DIR: remote, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' };
    const server = spawn(process.execPath, [SVC, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<string>((ok) => server.stderr!.on('data', (d) => /on (http:\/\/\S+)/.test(String(d)) && ok(/on (http:\/\/\S+)/.exec(String(d))![1])));
    const t = performance.now();
    const r = spawnSync(process.execPath, [SVC, 'ingest', 'big', file, '--format', 'text', '--wait', '--output', 'json'], {
      env: { ...env, SVC_DATA_DIR: join(work.path, 'none'), SVC_URL: url, SVC_TOKEN: who.token },
      encoding: 'utf8',
    });
    const seconds = (performance.now() - t) / 1000;
    if (r.status !== 0) throw new Error(r.stderr);
    const run = JSON.parse(r.stdout);
    rows.push(['upload + ingest through svc serve', run.documents.parsed, fixed(seconds, 1), fixed(run.documents.parsed / seconds, 0), fixed(peakRssMiB(server.pid!), 0)]);
    server.kill('SIGTERM');
    await once(server, 'exit');
    printTable(`${count.toLocaleString('en')} log lines to ready (text and SQL; vectors off)`, ['path', 'records', 'seconds', 'records/s', 'server peak RSS MiB'], rows);
  } finally {
    work.remove();
  }
}

export const uploadIngestBench = main;
if (process.argv[1] === import.meta.filename) await main();
