/**
 * Scale: N log lines (the Loghub samples cycled, each made unique) streamed through POST /v1/ingest
 * of `svc serve`, in parts, while searches run every 30 s. Prints lines/s to searchable, the
 * server's peak RSS (anonymous and file-backed), text segments over time, search p50/p99 during
 * ingest, reopen time to the first answered search, and data-dir size against the input. The
 * baseline, in the same run: MiniSearch holding the first million of the same lines in one heap.
 *
 *   npm run bench -- scale [--lines N] [--memory-max MiB]     (default 10,000,000 lines: about 1.8 GB of text)
 *
 * --memory-max runs the server in a memory cgroup of that size (as root), as a container's limit would.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { LOGHUB, repeatLines } from './ingest.js';
import { MemoryCap } from './lib/memoryCap.js';
import { quantile } from './lib/stats.js';
import { serve, svc, tempDir, type Served } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const PART = 250_000;
const PROBE_EVERY_MS = 30_000;
const QUERIES = ['error', 'failed password', 'block replica', 'connection closed', 'kernel interrupt', 'session opened root', 'nova compute instance', 'file does not exist'];
const BASELINE_LINES = 1_000_000;

const status = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Resident MiB of the files `pid` maps, by where they lie: the data dir's first two path segments, else "other files". */
function residentFiles(pid: number, dataDir: string): string {
  const by = new Map<string, number>();
  let file: string | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ [1-9]\d* +(\/.*)$/.exec(line);
    if (mapping) file = mapping[1].startsWith(dataDir) ? mapping[1].slice(dataDir.length + 1).split('/').slice(0, 2).join('/') : 'other files';
    else if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) file = undefined;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && file) by.set(file, (by.get(file) ?? 0) + Number(rss[1]) / 1024);
  }
  return [...by].sort((a, b) => b[1] - a[1]).map(([f, mib]) => `${f} ${fixed(mib, 0)}`).join(', ');
}

function option(name: string): number | undefined {
  const at = process.argv.indexOf(name);
  if (at < 0) return undefined;
  const n = Number(process.argv[at + 1]);
  if (!(n > 0)) throw new Error(`${name} takes a positive number`);
  return n;
}

function duBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

export async function scaleBench(): Promise<void> {
  const total = option('--lines') ?? 10_000_000;
  const cap = option('--memory-max') === undefined ? null : new MemoryCap(option('--memory-max')!);
  const base = repeatLines(LOGHUB, 12_000);
  const lineAt = (i: number) => `${base[i % base.length]} #${i}`;
  const work = tempDir('svc-bench-scale-');
  const dataDir = join(work.path, 'data');
  const { out: admin } = svc(dataDir, ['init', '--yes']);
  svc(dataDir, ['datasets', 'create', 'logs', '--no-semantic']);
  const segments = () => {
    try {
      return readdirSync(join(dataDir, 'indexes'), { recursive: true }).filter((f) => /\.snapshot\.seg-\d+$/.test(String(f))).length;
    } catch {
      return 0;
    }
  };
  let server: Served = await serve(dataDir);
  cap?.add(server.proc.pid!);
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, raw?: string) => {
    const res = await request(server.url + path, {
      method,
      headers: { authorization: `Bearer ${admin.token}`, 'x-service-tenant-id': admin.tenant_id, 'content-type': raw === undefined ? 'application/json' : 'text/plain' },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      headersTimeout: 600_000,
      bodyTimeout: 600_000,
    });
    const json = (await res.body.json()) as any;
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json;
  };
  const count = async () => (await call('POST', '/v1/search', { datasets: ['logs'], limit: 1 })).total.value as number;
  const probe = async () => {
    const took: number[] = [];
    for (const text of [...QUERIES, ...QUERIES]) {
      const at = performance.now();
      await call('POST', '/v1/search', { datasets: ['logs'], text, limit: 10 });
      took.push(performance.now() - at);
    }
    return took;
  };

  try {
    const started = performance.now();
    const timeline: (string | number)[][] = [];
    let sent = 0;
    let inputBytes = 0;
    let peakAnon = 0;
    const sampler = setInterval(() => (peakAnon = Math.max(peakAnon, status(server.proc.pid!, 'RssAnon'))), 1000);
    const sample = async () => {
      const took = await probe();
      const searchable = await count();
      timeline.push([fixed((performance.now() - started) / 1000, 0), sent.toLocaleString('en'), searchable.toLocaleString('en'), segments(), fixed(quantile(took, 0.5), 1), fixed(quantile(took, 0.99), 1), fixed(status(server.proc.pid!, 'VmRSS'), 0), fixed(status(server.proc.pid!, 'RssAnon'), 0)]);
      return searchable;
    };
    // searches every 30 s from the first part to the last record searchable
    const sampling = (async () => {
      for (let next = started + PROBE_EVERY_MS; ; next += PROBE_EVERY_MS) {
        await sleep(Math.max(0, next - performance.now()));
        if ((await sample()) >= total) return;
      }
    })();
    while (sent < total) {
      const n = Math.min(PART, total - sent);
      const body = Array.from({ length: n }, (_, i) => lineAt(sent + i)).join('\n') + '\n';
      inputBytes += Buffer.byteLength(body);
      await call('POST', '/v1/ingest/sources/logs/stream?format=text', undefined, body);
      sent += n;
    }
    while ((await count()) < total) await sleep(500);
    const seconds = (performance.now() - started) / 1000;
    await sampling;
    clearInterval(sampler);
    const peak = status(server.proc.pid!, 'VmHWM');
    const files = residentFiles(server.proc.pid!, dataDir);
    const afterIngest = await probe();
    await server.stop();

    const reopenAt = performance.now();
    server = await serve(dataDir);
    cap?.add(server.proc.pid!);
    await call('POST', '/v1/search', { datasets: ['logs'], text: 'error', limit: 10 });
    const reopen = (performance.now() - reopenAt) / 1000;
    const afterReopen = await probe();
    await server.stop();
    const size = duBytes(dataDir);

    const mini = miniSearchBaseline(Math.min(total, BASELINE_LINES));
    printTable(`Scale: ${total.toLocaleString('en')} log lines through POST /v1/ingest of svc serve (${fixed(inputBytes / 2 ** 30, 2)} GiB)`, ['what', 'svc', 'baseline in the same run'], [
      ['lines/s, first byte → all searchable', Math.round(total / seconds), `MiniSearch addAll of ${mini.lines.toLocaleString('en')} lines: ${Math.round(mini.linesPerSecond)}`],
      ['peak RSS MiB (whole server process)', fixed(peak, 0), `MiniSearch process for ${mini.lines.toLocaleString('en')} lines: ${fixed(mini.peakMiB, 0)}`],
      ['peak anonymous RSS MiB (heap and native, without mapped files)', fixed(peakAnon, 0), ''],
      ...(cap ? [[`memory cgroup of ${cap.mib} MiB: the most it was charged (with page cache) MiB`, fixed(cap.peakMiB(), 0), '']] : []),
      ['resident mapped files MiB, all searchable', files, ''],
      ['text segments at the end', segments(), ''],
      ['search p50 / p99 ms after ingest (16 searches)', `${fixed(quantile(afterIngest, 0.5), 1)} / ${fixed(quantile(afterIngest, 0.99), 1)}`, ''],
      ['reopen: svc serve start → first search answered (s)', fixed(reopen, 2), ''],
      ['search p50 / p99 ms after reopen', `${fixed(quantile(afterReopen, 0.5), 1)} / ${fixed(quantile(afterReopen, 0.99), 1)}`, ''],
      ['data dir size / input size', `${fixed(size / 2 ** 30, 2)} GiB / ${fixed(inputBytes / 2 ** 30, 2)} GiB = ${fixed(size / inputBytes, 2)}×`, ''],
    ]);
    printTable(`Scale: during ingest, every ${PROBE_EVERY_MS / 1000} s`, ['s', 'lines sent', 'searchable', 'segments', 'search p50 ms', 'p99 ms', 'RSS MiB', 'anonymous RSS MiB'], timeline);
  } finally {
    await server.stop();
    if (process.env.SVC_BENCH_KEEP) console.log(`kept ${work.path}`);
    else work.remove();
    cap?.remove();
  }
}

/** MiniSearch with svc's analyzer over the same lines, in a process of its own: lines/s and peak RSS. */
function miniSearchBaseline(lines: number): { lines: number; linesPerSecond: number; peakMiB: number } {
  const script = `
    const { default: MiniSearch } = await import('minisearch');
    const { tokenize, normalizeTerm } = await import(${JSON.stringify(new URL('../../dist/engine/text/analyzer.js', import.meta.url).href)});
    const { LOGHUB, repeatLines } = await import(${JSON.stringify(new URL('./ingest.js', import.meta.url).href)});
    const base = repeatLines(LOGHUB, 12000);
    const docs = Array.from({ length: ${lines} }, (_, i) => ({ id: i, body: base[i % base.length] + ' #' + i }));
    const mini = new MiniSearch({ fields: ['body'], tokenize, processTerm: normalizeTerm });
    const at = performance.now();
    mini.addAll(docs);
    const s = (performance.now() - at) / 1000;
    const hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    console.log(JSON.stringify({ linesPerSecond: ${lines} / s, peakMiB: hwm }));`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=16384', '--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(import.meta.url); ${script}`], { encoding: 'utf8', cwd: process.cwd() });
  if (r.status !== 0) throw new Error(r.stderr);
  return { lines, ...JSON.parse(r.stdout.trim()) };
}
