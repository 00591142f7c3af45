/**
 * SQL at 1M log records: the same GROUP BY through `POST /v1/sql` on `svc serve` and run directly in
 * DuckDB over the same rows loaded natively (read_json of the same NDJSON), in the same run; their
 * ratio is svc's overhead. Also: how fast the SQL index loads records, and its share of the ingest.
 *
 *   npm run build && npx tsc -p bench/tsconfig.json && node .bench/bench/sql.js
 *   SVC_BENCH_SQL_RECORDS=200000 node .bench/bench/sql.js      (a smaller run)
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { parseString } from '@fast-csv/parse';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { request } from 'undici';
import { Engine } from '../src/engine/index.js';
import { csvCell } from '../src/engine/ingest/parsers/csv.js';
import { DATA } from './lib/paths.js';
import { quantile } from './lib/stats.js';
import { serve, tempDir } from './lib/svc.js';
import { fixed, printTable } from './lib/table.js';

const RECORDS = Number(process.env.SVC_BENCH_SQL_RECORDS ?? 1_000_000);
const RUNS = Number(process.env.SVC_BENCH_SQL_RUNS ?? 60);
const SYSTEMS = ['HDFS', 'BGL', 'Linux', 'OpenStack', 'Apache', 'OpenSSH'];
const QUERIES: Record<string, string> = {
  'GROUP BY Level, Component': 'SELECT Level, Component, count(*) AS n FROM logs GROUP BY Level, Component ORDER BY n DESC, Level, Component',
  'GROUP BY system, filtered': "SELECT system, count(*) AS n, count(DISTINCT EventId) AS events FROM logs WHERE Level <> 'INFO' GROUP BY system ORDER BY system",
};

const seconds = (since: number) => (performance.now() - since) / 1000;

function csvRows(path: string): Promise<Record<string, string>[]> {
  return new Promise((ok, fail) => {
    const rows: Record<string, string>[] = [];
    parseString(readFileSync(path, 'utf8'), { headers: true }).on('data', (r) => rows.push(r)).on('error', fail).on('end', () => ok(rows));
  });
}

/** The Loghub structured CSVs as log records (typed cells, a `system` field), cycled to `total` lines of NDJSON. */
export async function writeRecords(file: string, total: number): Promise<void> {
  const base: Record<string, unknown>[] = [];
  for (const system of SYSTEMS) {
    for (const row of await csvRows(join(DATA, 'loghub', system, `${system}_2k.log_structured.csv`))) {
      base.push({ system, ...Object.fromEntries(Object.entries(row).map(([k, v]) => [k, csvCell(v)])) });
    }
  }
  const out = createWriteStream(file);
  for (let i = 0; i < total; i++) {
    const line = JSON.stringify({ ...base[i % base.length], LineId: i + 1 }) + '\n';
    if (!out.write(line)) await new Promise<void>((ok) => out.once('drain', () => ok()));
  }
  out.end();
  await finished(out);
}

async function ingest(dataDir: string, file: string) {
  const engine = await Engine.open(dataDir);
  const { token, tenant_id } = await engine.init('bench', 'admin@localhost');
  const caller = engine.localCaller();
  // no vectors: embedding a million records is another benchmark's subject, and would run on in the server being timed
  await engine.datasets.create(caller, { dataset_id: 'logs', semantic: false });
  const started = performance.now();
  const run = await engine.ingest.submit(caller, createReadStream(file, { highWaterMark: 1 << 20 }), { dataset_id: 'logs', format: 'ndjson', filename: 'logs.ndjson' });
  const done = await engine.ingest.wait(caller, run.ingest_run_id);
  const total = seconds(started);
  if (done.status !== 'ready' || done.documents.parsed !== RECORDS || !done.ready_for.sql_search) throw new Error(`ingest: ${JSON.stringify(done)}`);
  const { records, ms } = engine.sql.indexes.stats;
  const closing = performance.now();
  await engine.close();
  return { token, tenant_id, total, sqlRecords: records, sqlSeconds: ms / 1000, close: seconds(closing) };
}

/**
 * Times `a` and `b` `RUNS` times each after three warm-up calls, one call of each in turn, so that
 * whatever else the machine does weighs on both alike; returns both sets of samples in ms.
 */
async function timePair(a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[number[], number[]]> {
  for (let i = 0; i < 3; i++) {
    await a();
    await b();
  }
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of [a, b].entries()) {
      const started = performance.now();
      await fn();
      samples[k].push(performance.now() - started);
    }
  }
  return samples;
}

export async function sqlBench(): Promise<void> {
  const work = tempDir('svc-bench-sql-');
  try {
    const file = join(work.path, 'logs.ndjson');
    await writeRecords(file, RECORDS);
    const n = RECORDS.toLocaleString('en');
    const loaded = await ingest(join(work.path, 'data'), file);
    printTable(`SQL indexing: ${n} log records (NDJSON, in process)`, ['step', 'value'], [
      ['ingest to ready (records, text index, SQL index; no vectors)', `${fixed(loaded.total, 1)} s, ${Math.round(RECORDS / loaded.total).toLocaleString('en')} records/s`],
      ['SQL index load (DuckDB appender)', `${fixed(loaded.sqlSeconds, 1)} s, ${Math.round(loaded.sqlRecords / loaded.sqlSeconds).toLocaleString('en')} records/s`],
      ['SQL share of the ingest', `${fixed((100 * loaded.sqlSeconds) / loaded.total, 1)} %`],
      ['close (text snapshot)', `${fixed(loaded.close, 1)} s`],
    ]);

    // the same rows loaded natively, in a database with the same limits as a tenant's
    const native = await DuckDBInstance.create(join(work.path, 'native.duckdb'), { threads: String(availableParallelism()), memory_limit: '1GB' });
    const conn = await native.connect();
    let started = performance.now();
    await conn.run(`CREATE TABLE logs AS SELECT * FROM read_json('${file}', format = 'newline_delimited')`);
    const nativeLoad = seconds(started);

    const server = await serve(join(work.path, 'data'));
    try {
      const viaSvc = async (sql: string) => {
        const res = await request(`${server.url}/v1/sql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${loaded.token}`, 'x-service-tenant-id': loaded.tenant_id, 'content-type': 'application/json' },
          body: JSON.stringify({ sql }),
        });
        const body = (await res.body.json()) as { records: { metadata: Record<string, unknown> }[] };
        if (res.statusCode !== 200) throw new Error(`svc: ${JSON.stringify(body)}`);
        return body.records.map((r) => r.metadata);
      };
      const direct = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
      started = performance.now();
      await viaSvc('SELECT count(*) FROM logs'); // the first query opens the tenant's database
      const firstQuery = seconds(started);

      const rows: (string | number)[][] = [];
      for (const [name, sql] of Object.entries(QUERIES)) {
        const a = await viaSvc(sql);
        const b = await direct(sql);
        if (a.length !== b.length || a.some((r, i) => Number(r.n) !== Number(b[i].n))) throw new Error(`${name}: svc and DuckDB disagree`);
        const [svcMs, nativeMs] = await timePair(() => viaSvc(sql), () => direct(sql));
        const [s50, d50] = [quantile(svcMs, 0.5), quantile(nativeMs, 0.5)];
        rows.push([name, fixed(s50, 1), fixed(quantile(svcMs, 0.9), 1), fixed(d50, 1), fixed(quantile(nativeMs, 0.9), 1), `${fixed(s50 / d50, 2)}×`]);
      }
      printTable(`SQL query: ${n} records, svc (/v1/sql over HTTP) against DuckDB directly, ${RUNS} runs each, taking turns`, ['query', 'svc p50 ms', 'svc p90 ms', 'DuckDB p50 ms', 'DuckDB p90 ms', 'ratio (goal ≤ 1.2)'], rows);
      console.log(`native load (read_json): ${fixed(nativeLoad, 1)} s; first /v1/sql after start (opens the tenant database): ${fixed(firstQuery * 1000, 0)} ms`);
    } finally {
      await server.stop();
      conn.closeSync();
      native.closeSync();
    }
  } finally {
    work.remove();
  }
}

if (process.argv[1] === import.meta.filename) {
  console.log(`node ${process.version}, ${availableParallelism()} cpus`);
  await sqlBench();
}
