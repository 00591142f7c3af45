/**
 * Exports at 1M log records: `POST /v1/export` of every record to NDJSON and to CSV on `svc serve`,
 * polled to completion and downloaded, beside a baseline in the same run: the same records read
 * straight from LMDB and `JSON.stringify`'d to a file. Throughput is the file's MB per second; the
 * server's anonymous resident memory is sampled while each export runs, to show it stays flat.
 *
 *   npm run bench -- export
 *   SVC_BENCH_EXPORT_RECORDS=200000 npm run bench -- export      (a smaller run)
 */
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { Engine } from '../src/engine/index.js';
import { openStore } from '../src/engine/store/db.js';
import { toResult } from '../src/engine/search/search.js';
import { writeRecords } from './sql.js';
import { serve, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const RECORDS = Number(process.env.SVC_BENCH_EXPORT_RECORDS ?? 1_000_000);
const MiB = 2 ** 20;
const seconds = (since: number) => (performance.now() - since) / 1000;
/** Anonymous resident memory (heap, buffers, DuckDB): the pages of LMDB's memory-mapped file that reads touch are the page cache's, not the process's own. */
const rssMiB = (pid: number | 'self') => Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function ingest(dataDir: string, file: string) {
  const engine = await Engine.open(dataDir);
  const { token, tenant_id } = await engine.init('bench', 'admin@localhost');
  const caller = engine.localCaller();
  await engine.datasets.create(caller, { dataset_id: 'logs', semantic: false });
  const { createReadStream } = await import('node:fs');
  const run = await engine.ingest.submit(caller, createReadStream(file, { highWaterMark: 1 << 20 }), { dataset_id: 'logs', format: 'ndjson', filename: 'logs.ndjson' });
  const done = await engine.ingest.wait(caller, run.ingest_run_id);
  if (done.status !== 'ready' || done.documents.parsed !== RECORDS) throw new Error(`ingest: ${JSON.stringify(done.documents)}`);
  await engine.close();
  return { token, tenant_id };
}

/** The baseline: every record of the dataset, newest first as the export orders them, as result records to a file. */
async function baseline(dataDir: string, file: string, tenantId: string) {
  const store = openStore(dataDir);
  const rss = rssMiB('self');
  let peak = rss;
  const started = performance.now();
  const out = createWriteStream(file);
  let n = 0;
  for (const { value: rec } of store.records.getRange({ start: [tenantId, 'logs', Number.MAX_SAFE_INTEGER], end: [tenantId, 'logs', 0], reverse: true })) {
    const line = JSON.stringify(toResult(tenantId, 'logs', rec, 0, 'none', new Set())) + '\n';
    if (!out.write(line)) await new Promise<void>((ok) => out.once('drain', () => ok()));
    if (++n % 50_000 === 0) peak = Math.max(peak, rssMiB('self'));
  }
  out.end();
  await finished(out);
  const took = seconds(started);
  await store.close();
  return { rows: n, seconds: took, bytes: statSync(file).size, rss, peak };
}

export async function exportBench(): Promise<void> {
  const work = tempDir('svc-bench-export-');
  try {
    const file = join(work.path, 'logs.ndjson');
    await writeRecords(file, RECORDS);
    const dataDir = join(work.path, 'data');
    const { token, tenant_id } = await ingest(dataDir, file);
    const n = RECORDS.toLocaleString('en');
    const base = await baseline(dataDir, join(work.path, 'baseline.ndjson'), tenant_id);
    if (base.rows !== RECORDS) throw new Error(`baseline read ${base.rows} records`);

    const rows: (string | number)[][] = [[`baseline: LMDB → JSON.stringify → file (bench process)`, base.rows.toLocaleString('en'), fixed(base.bytes / MiB, 0), fixed(base.seconds, 1), fixed(base.bytes / MiB / base.seconds, 1), fixed(base.rss, 0), fixed(base.peak, 0)]];
    const server = await serve(dataDir);
    const headers = { authorization: `Bearer ${token}`, 'x-service-tenant-id': tenant_id, 'content-type': 'application/json' };
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await request(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await res.body.json()) as any;
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
      return json;
    };
    try {
      await call('POST', '/v1/search', { text: 'block', datasets: ['logs'], limit: 1 }); // the text index is loaded before any timing
      // a quarter of the records beside all of them: memory that stays flat does not grow with the rows
      const quarter = Math.floor(RECORDS / 4);
      const runs = [
        { what: 'ndjson, a quarter (where LineId lte)', format: 'ndjson', rows: quarter, where: [{ field: 'LineId', op: 'lte', value: quarter }] },
        { what: 'ndjson', format: 'ndjson', rows: RECORDS },
        { what: 'csv', format: 'csv', rows: RECORDS },
      ] as const;
      for (const run of runs) {
        const rss = rssMiB(server.proc.pid!);
        let peak = rss;
        const started = performance.now();
        const where = 'where' in run ? run.where : undefined;
        let exp = await call('POST', '/v1/export', { search_request: { datasets: ['logs'], where }, format: run.format });
        while (!['completed', 'failed', 'cancelled'].includes(exp.status)) {
          await sleep(100);
          peak = Math.max(peak, rssMiB(server.proc.pid!));
          exp = await call('GET', `/v1/export/${exp.export_id}`);
        }
        const took = seconds(started);
        if (exp.status !== 'completed' || exp.row_count !== run.rows) throw new Error(`export ${run.what}: ${JSON.stringify(exp)}`);
        // the file is whole: download it and count its lines
        const res = await request(exp.download_url);
        let bytes = 0;
        let lines = 0;
        for await (const chunk of res.body) {
          bytes += chunk.length;
          for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines++;
        }
        const expected = run.format === 'csv' ? run.rows + 1 : run.rows; // a CSV's header row; a body may hold newlines in quotes, our log lines do not
        if (bytes !== exp.size_bytes || lines < expected) throw new Error(`download ${run.what}: ${bytes} bytes, ${lines} lines of ${exp.size_bytes}, ${expected}`);
        rows.push([`svc export ${run.what} (job, server)`, exp.row_count.toLocaleString('en'), fixed(bytes / MiB, 0), fixed(took, 1), fixed(bytes / MiB / took, 1), fixed(rss, 0), fixed(peak, 0)]);
      }
    } finally {
      await server.stop();
    }
    printTable(`Export of ${n} log records (anonymous RSS in MiB: before, and the highest sampled while it ran)`, ['what', 'rows', 'MiB', 'seconds', 'MiB/s', 'RSS before', 'RSS peak'], rows);
  } finally {
    work.remove();
  }
}

if (process.argv[1] === import.meta.filename) await exportBench();
