/**
 * Exports end to end over the HTTP API of an in-process app (real LMDB, DuckDB and blob store):
 * each format read back, the download URL and its signature, the source rules, cancel, delete,
 * retention and tenants. The SIGKILL restart is in exports-restart.test.ts.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseString } from '@fast-csv/parse';
import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { loadSecret } from '../src/engine/auth/secret.js';
import { DiskFull } from '../src/engine/errors.js';
import { downloadQuery } from '../src/engine/exports/downloadSigning.js';
import { sqlColumns, type ExportRecord } from '../src/engine/exports/columns.js';
import { writeParquet, writerDb } from '../src/engine/exports/parquetWriter.js';
import { EXPORT_JOB, exportKey } from '../src/engine/exports/state.js';
import { newId } from '../src/engine/ids.js';
import { openStore } from '../src/engine/store/db.js';
import { isTerminal } from '../src/engine/jobs/queue.js';
import { useApp } from './helpers/app.js';
import { DATA, tempDir } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const HDFS = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'));
const DAY_MS = 86_400_000;

/** Records whose text needs every kind of CSV quoting, and typed metadata for Parquet. */
const TRICKY = [
  { id: 't1', msg: 'plain words', note: 'no quoting', n: 1, ratio: 0.5, ok: true },
  { id: 't2', msg: 'a "quoted" word', note: 'comma, inside', n: 2, ratio: 1, ok: false },
  { id: 't3', msg: 'two\nlines', note: 'cr\r\nlf', n: 3, ratio: 2.25, ok: true },
  { id: 't4', msg: '",\n all of them ""', note: '', n: 4, ratio: 3, ok: null },
];

const { t, http } = useApp();

/** A file's bytes as a download answers them. */
async function fetchFile(url: string): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  const res = await request(url);
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

async function exportDone(body: Record<string, unknown>, as = http): Promise<Json> {
  const created = expectStatus(await as.post('/v1/export', body), 202);
  expect(created).toMatchObject({ export_id: expect.stringMatching(/^exp_/), job_id: expect.stringMatching(/^job_/), status: expect.stringMatching(/pending|running|completed/) });
  return completed(created.export_id, as);
}

function completed(exportId: string, as = http): Promise<Json> {
  return until(`export ${exportId}`, async () => {
    const e = expectStatus(await as.get(`/v1/export/${exportId}`), 200);
    if (e.status === 'failed') throw new Error(`export failed: ${e.error_message}`);
    return e.status === 'completed' ? e : undefined;
  });
}

async function download(e: Json): Promise<Buffer> {
  const file = await fetchFile(e.download_url);
  expect(file.status, file.bytes.toString().slice(0, 300)).toBe(200);
  expect(file.bytes.length).toBe(e.size_bytes);
  return file.bytes;
}

const ndjsonLines = (b: Buffer) => b.toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

function parseCsv(text: string): Promise<string[][]> {
  return new Promise((ok, fail) => {
    const rows: string[][] = [];
    parseString(text, { headers: false })
      .on('data', (row: string[]) => rows.push(row))
      .on('error', fail)
      .on('end', () => ok(rows));
  });
}

async function readParquet(bytes: Buffer): Promise<{ types: Record<string, string>; rows: Record<string, unknown>[] }> {
  const dir = tempDir('svc-parquet-');
  const path = join(dir.path, 'x.parquet');
  writeFileSync(path, bytes);
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`)).getRowObjectsJS();
    const rows = (await conn.runAndReadAll(`SELECT * FROM read_parquet('${path}')`)).getRowObjectsJson() as Record<string, unknown>[];
    return { types: Object.fromEntries(described.map((d) => [String(d.column_name), String(d.column_type)])), rows };
  } finally {
    conn.closeSync();
    db.closeSync();
    dir.remove();
  }
}

const filesOf = (tenant: string, sub: string) => {
  const dir = join(t.engine.dataDir, 'blobs', tenant, sub);
  return existsSync(dir) ? readdirSync(dir) : [];
};

/** Creates the dataset (unless `create` is false) and ingests `body` into it, until its records are searchable and in SQL. */
async function ingest(id: string, body: string | Buffer, format: string, query = '', create = true): Promise<void> {
  if (create) expectStatus(await http.post('/v1/admin/datasets', { dataset_id: id, semantic: false }), 201); // no vectors: their embedding would run on past the tests
  const run = expectStatus(await http.call('POST', `/v1/ingest/sources/${id}/stream?format=${format}${query}`, { body, contentType: 'application/octet-stream' }), 202);
  await until(`ingest of ${id}`, async () => {
    const r = expectStatus(await http.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
    if (r.status === 'failed') throw new Error(JSON.stringify(r));
    return r.status === 'ready' && r.ready_for.sql_search ? r : undefined;
  });
}

const TRICKY_QUERY = '&id_field=id&body_field=msg';
const trickyLines = (change = '') => TRICKY.map((r) => JSON.stringify({ ...r, msg: `${r.msg}${change}` })).join('\n');

beforeAll(async () => {
  await ingest('hdfs', HDFS, 'csv');
  await ingest('tricky', trickyLines(), 'ndjson', TRICKY_QUERY);
});

describe('a view', () => {
  it('an export of a materialized view writes its records as they were frozen, in its order; a live view is run again', async () => {
    // a dataset of its own: the records change under the view, and the other tests read 'tricky' as it was
    await ingest('viewed', trickyLines(), 'ndjson', TRICKY_QUERY);
    const req = { text: 'quoted lines', datasets: ['viewed'] };
    const view = expectStatus(await http.post('/v1/views', { name: 'tricky ones', search_request: req }), 201);
    const held = expectStatus(await http.get(`/v1/views/${view.view_id}/records?limit=1000`), 200).records;
    expect(held.length).toBeGreaterThan(0);
    // the records change after the view was made: the view, and so its export, keeps the old content
    await ingest('viewed', trickyLines(' changed'), 'ndjson', TRICKY_QUERY, false);

    const frozen = ndjsonLines(await download(await exportDone({ view_id: view.view_id })));
    expect(frozen).toEqual(held);
    expect(frozen.every((r) => !r.body.endsWith('changed'))).toBe(true);

    const live = expectStatus(await http.post('/v1/views', { name: 'tricky, live', kind: 'live', search_request: req }), 201);
    const now = ndjsonLines(await download(await exportDone({ view_id: live.view_id })));
    expect(now.map((r) => r.id).sort()).toEqual(held.map((r: Json) => r.id).sort());
    expect(now.every((r) => r.body.endsWith('changed'))).toBe(true);
  });
});

describe('NDJSON', () => {
  it('a search export holds every matching record once, with provenance, and downloads by its signed URL', async () => {
    const req = { text: 'PacketResponder', datasets: ['hdfs'], limit: 5 };
    const total = expectStatus(await http.post('/v1/search', req), 200).total.value;
    expect(total).toBeGreaterThan(100);
    const e = await exportDone({ search_request: req, name: 'responders' });
    expect(e).toMatchObject({ format: 'ndjson', gzip: false, row_count: total, store_bucket: 'exports', store_key: `${e.export_id}.ndjson`, error_message: null });
    expect(e.download_url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/v1/export/${e.export_id}/download\\?tenant=.+&expires=\\d+&sig=[0-9a-f]{64}$`));
    expect(Date.parse(e.download_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect(Date.parse(e.expires_at) - Date.parse(e.completed_at)).toBe(7 * DAY_MS);

    const file = await fetchFile(e.download_url);
    expect(file.headers['content-type']).toBe('application/x-ndjson');
    expect(file.headers['content-disposition']).toBe('attachment; filename="responders.ndjson"');
    const records = ndjsonLines(file.bytes);
    expect(records).toHaveLength(total);
    expect(new Set(records.map((r) => r.id)).size).toBe(total);
    for (const r of records) {
      expect(r.body).toContain('PacketResponder');
      expect(r.provenance).toMatchObject({ dataset_id: 'hdfs', tenant_id: t.admin.tenant_id, source_key: expect.stringMatching(/^hdfs\//), line: expect.any(Number) });
      expect(r.score).toBeGreaterThan(0);
    }
    // best first, as the search ranks them
    const scores = records.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('an unscored search export streams every record of the dataset once', async () => {
    const e = await exportDone({ search_request: { datasets: ['hdfs'] } });
    const records = ndjsonLines(await download(e));
    expect(records).toHaveLength(2000);
    expect(new Set(records.map((r) => `${r.provenance.source_key}:${r.provenance.line}`)).size).toBe(2000);
  });

  it('a ranked export over the ranking cap fails naming it; an unranked one has no cap', async () => {
    const cap = t.engine.config.search.maxAnswerRecords;
    t.engine.config.search.maxAnswerRecords = 100; // as SVC_VIEW_MAX_RECORDS=100 would
    try {
      const created = expectStatus(await http.post('/v1/export', { search_request: { text: 'PacketResponder', datasets: ['hdfs'] } }), 202);
      const failed = await until('the ranked export failed', async () => {
        const e = expectStatus(await http.get(`/v1/export/${created.export_id}`), 200);
        return e.status === 'failed' ? e : undefined;
      });
      expect(failed.error_message).toMatch(/more than 100 records/);
      expect(expectStatus(await http.get(`/v1/admin/jobs/${created.job_id}`), 200).attempts).toBe(1); // no retry can help
      expect((await exportDone({ search_request: { datasets: ['hdfs'] } })).row_count).toBe(2000);
    } finally {
      t.engine.config.search.maxAnswerRecords = cap;
    }
  });

  it('gzip: the same lines, gzipped, as application/gzip named .ndjson.gz', async () => {
    const req = { search_request: { datasets: ['tricky'] } };
    const plain = await exportDone(req);
    const zipped = await exportDone({ ...req, gzip: true });
    expect(zipped.store_key).toBe(`${zipped.export_id}.ndjson.gz`);
    const file = await fetchFile(zipped.download_url);
    expect(file.headers['content-type']).toBe('application/gzip');
    expect(file.headers['content-disposition']).toBe(`attachment; filename="${zipped.export_id}.ndjson.gz"`);
    const strip = (rows: Json[]) => rows.map(({ score, ...r }) => r);
    expect(strip(ndjsonLines(gunzipSync(file.bytes)))).toEqual(strip(ndjsonLines(await download(plain))));
  });
});

describe('a search export', () => {
  it('is frozen as its job starts: records re-ingested after it was made are in the file, as they are now', async () => {
    await ingest('renewed', trickyLines(), 'ndjson', TRICKY_QUERY);
    // a job holding the exports' serial key keeps the export waiting while its records are ingested again
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    t.engine.jobs.register('hold_exports', { handler: () => held, serialKey: () => EXPORT_JOB });
    const hold = await t.engine.jobs.enqueue(t.admin.tenant_id, 'hold_exports', {});
    let created: Json;
    try {
      await until('the hold running', async () => (t.engine.jobs.get(t.admin.tenant_id, hold.job_id).status === 'running' ? true : undefined));
      created = expectStatus(await http.post('/v1/export', { search_request: { datasets: ['renewed'] } }), 202);
      await ingest('renewed', trickyLines(' renewed'), 'ndjson', TRICKY_QUERY, false);
      expect(expectStatus(await http.get(`/v1/export/${created.export_id}`), 200).status).toBe('pending');
    } finally {
      release();
    }
    const e = await completed(created.export_id);
    expect(e.search_request).toEqual({ datasets: ['renewed'] }); // as given
    const records = ndjsonLines(await download(e));
    expect(records.map((r) => r.id).sort()).toEqual(TRICKY.map((r) => r.id).sort());
    for (const r of records) expect(r.body).toMatch(/ renewed$/);
  });
});

describe('CSV', () => {
  it('quotes as RFC 4180 says: fields round-trip through a CSV parser', async () => {
    const e = await exportDone({ search_request: { datasets: ['tricky'] }, format: 'csv', fields: ['id', 'body', 'metadata.note', 'n', 'provenance.line'] });
    const bytes = await download(e);
    expect(bytes.toString()).toContain('"a ""quoted"" word"');
    expect(bytes.toString().split('\r\n')[0]).toBe('id,body,metadata.note,n,provenance.line');
    const [header, ...rows] = await parseCsv(bytes.toString());
    expect(header).toEqual(['id', 'body', 'metadata.note', 'n', 'provenance.line']);
    const byId = new Map(rows.map((r) => [r[0], r]));
    expect(byId.size).toBe(TRICKY.length);
    for (const [i, src] of TRICKY.entries()) expect(byId.get(src.id), src.id).toEqual([src.id, src.msg, src.note, String(src.n), String(i + 1)]);
  });

  it('without fields: the default columns, metadata as JSON', async () => {
    const e = await exportDone({ search_request: { datasets: ['tricky'], where: [{ field: 'n', op: 'eq', value: 2 }] }, format: 'csv' });
    const [header, row, ...rest] = await parseCsv((await download(e)).toString());
    expect(header).toEqual(['id', 'title', 'body', 'score', 'created_at', 'time', 'provenance.dataset_id', 'provenance.source_key', 'provenance.line', 'metadata']);
    expect(rest).toEqual([]);
    expect(row.slice(0, 3)).toEqual(['t2', '', 'a "quoted" word']);
    expect(row[6]).toBe('tricky');
    expect(JSON.parse(row[9])).toMatchObject({ note: 'comma, inside', n: 2, ratio: 1, ok: false });
  });
});

describe('Parquet', () => {
  it('typed columns, read back by DuckDB, every row', async () => {
    const e = await exportDone({ search_request: { datasets: ['hdfs'] }, format: 'parquet' });
    const file = await fetchFile(e.download_url);
    expect(file.headers['content-type']).toBe('application/vnd.apache.parquet');
    const { types, rows } = await readParquet(file.bytes);
    expect(types).toEqual({
      id: 'VARCHAR', title: 'VARCHAR', body: 'VARCHAR', score: 'DOUBLE', created_at: 'TIMESTAMP WITH TIME ZONE', time: 'TIMESTAMP WITH TIME ZONE',
      'provenance.dataset_id': 'VARCHAR', 'provenance.source_key': 'VARCHAR', 'provenance.line': 'BIGINT', metadata: 'JSON',
    });
    expect(rows).toHaveLength(2000);
    expect(e.row_count).toBe(2000);
    expect(new Set(rows.map((r) => r['provenance.line'])).size).toBe(2000);
  });

  it('metadata columns take the type of their values', async () => {
    const e = await exportDone({ search_request: { datasets: ['tricky'] }, format: 'parquet', fields: ['id', 'metadata.n', 'metadata.ratio', 'metadata.ok', 'metadata.note'] });
    const { types, rows } = await readParquet(await download(e));
    expect(types).toEqual({ id: 'VARCHAR', 'metadata.n': 'BIGINT', 'metadata.ratio': 'DOUBLE', 'metadata.ok': 'BOOLEAN', 'metadata.note': 'VARCHAR' });
    const t2 = rows.find((r) => r.id === 't2')!;
    expect(t2).toEqual({ id: 't2', 'metadata.n': '2', 'metadata.ratio': 1, 'metadata.ok': false, 'metadata.note': 'comma, inside' });
  });
});

describe('the Parquet writer', () => {
  it('a write the writer refuses (here its memory limit) fails the export at once, saying why', async () => {
    const before = t.engine.exports.limits.parquetMemory;
    t.engine.exports.limits.parquetMemory = '1MB';
    try {
      const created = expectStatus(await http.post('/v1/export', { search_request: { datasets: ['hdfs'] }, format: 'parquet' }), 202);
      const failed = await until('the export failed', async () => {
        const e = expectStatus(await http.get(`/v1/export/${created.export_id}`), 200);
        return e.status === 'failed' ? e : undefined;
      });
      expect(failed.error_message).toMatch(/Parquet file could not be written: .*SVC_EXPORT_MEMORY_LIMIT is 1MB/);
      expect(expectStatus(await http.get(`/v1/admin/jobs/${created.job_id}`), 200).attempts).toBe(1);
      expect(filesOf(t.admin.tenant_id, '.tmp').filter((f) => f.startsWith('export_'))).toEqual([]);
    } finally {
      t.engine.exports.limits.parquetMemory = before;
    }
  });

  it('checks the free-space floor as its NDJSON copy grows: below it the export waits for space, then completes', async () => {
    const before = t.engine.config.disk.minFreeBytes;
    t.engine.config.disk.minFreeBytes = 2 ** 60; // as SVC_MIN_FREE_BYTES would
    t.engine.jobs.space.measure(true);
    let created: Json;
    try {
      // about 84 MB of rows to stage, a Parquet file of a few: only the staging file crosses 64 MiB
      created = expectStatus(await http.post('/v1/export', { sql: "SELECT i, repeat('x', 400) AS pad FROM range(200000) t(i)", format: 'parquet' }), 202);
      const waiting = await until('the export waiting for space', async () => {
        const job = t.engine.jobs.get(t.admin.tenant_id, created.job_id);
        if (isTerminal(job.status)) throw new Error(`the export ended ${job.status} below the floor`);
        return job.disk_waits ? job : undefined;
      });
      expect(waiting).toMatchObject({ status: 'pending', attempts: 0, error_message: expect.stringMatching(/disk is nearly full/) });
      expect(filesOf(t.admin.tenant_id, '.tmp').filter((f) => f.startsWith('export_'))).toEqual([]);
    } finally {
      t.engine.config.disk.minFreeBytes = before;
      t.engine.jobs.space.measure(true);
    }
    const e = await completed(created.export_id);
    expect(e.row_count).toBe(200_000);
    expect(expectStatus(await http.get(`/v1/admin/jobs/${created.job_id}`), 200).attempts).toBe(1);
  });

  it.skipIf(!existsSync('/dev/full'))('a staging write that finds the disk full fails as DiskFull (the job waits for space), not as a raw ENOSPC', async () => {
    const dir = tempDir('svc-staging-');
    try {
      symlinkSync('/dev/full', join(dir.path, 'rows.ndjson')); // every write there fails with ENOSPC
      async function* rows(): AsyncGenerator<ExportRecord[]> {
        yield [{ metadata: { i: 1 } } as unknown as ExportRecord];
      }
      await expect(writeParquet(dir.path, sqlColumns([{ name: 'i', type: 'BIGINT' }]), rows(), '64MB', () => {})).rejects.toBeInstanceOf(DiskFull);
    } finally {
      dir.remove();
    }
  });

  it('reaches its own folder and nothing else, and cannot unlock itself', async () => {
    const dir = tempDir('svc-writer-');
    try {
      const own = join(dir.path, 'own');
      mkdirSync(own);
      writeFileSync(join(own, 'in.csv'), 'a\n1\n');
      writeFileSync(join(dir.path, 'outside.csv'), 'secret\nvalue\n');
      const writer = await writerDb(own, '64MB');
      try {
        const run = (sql: string) => writer.conn.runAndReadAll(sql);
        expect((await run(`SELECT count(*)::INT AS n FROM read_csv('${own}/in.csv')`)).getRowObjectsJS()).toEqual([{ n: 1 }]);
        for (const sql of [
          `SELECT * FROM read_csv('${dir.path}/outside.csv')`,
          `SELECT * FROM read_csv('${own}/../outside.csv')`,
          `SELECT * FROM read_text('/etc/passwd')`,
          `COPY (SELECT 1) TO '${dir.path}/written.csv'`,
          `SET allowed_directories = ['/']`,
          `SET enable_external_access = true`,
        ]) {
          await expect(run(sql), sql).rejects.toThrow(/Permission Error|configuration has been locked/);
        }
        expect(existsSync(join(dir.path, 'written.csv'))).toBe(false);
      } finally {
        writer.close();
      }
    } finally {
      dir.remove();
    }
  });
});

describe('SQL', () => {
  it('streams more rows than a DuckDB chunk, as result records with the row in metadata', async () => {
    const e = await exportDone({ sql: 'SELECT i, i * 2 AS twice FROM range(10000) t(i) ORDER BY i', format: 'ndjson' });
    const records = ndjsonLines(await download(e));
    expect(e.row_count).toBe(10000);
    expect(records).toHaveLength(10000);
    expect(records[9999]).toMatchObject({ id: '10000', metadata: { i: 9999, twice: 19998 }, provenance: null });
  });

  it('a row that selects _id carries its record and provenance', async () => {
    const e = await exportDone({ sql: "SELECT _id, Level FROM hdfs WHERE Level = $1", params: ['WARN'] });
    const records = ndjsonLines(await download(e));
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) expect(r).toMatchObject({ id: r.metadata._id, metadata: { Level: 'WARN' }, provenance: { dataset_id: 'hdfs' } });
  });

  it('splits a chunk into batches of about a search page when its rows bring large records', async () => {
    const big = Array.from({ length: 24 }, (_, i) => JSON.stringify({ id: `b${i}`, msg: `record ${i} `.padEnd(600_000, 'lorem ipsum ') })).join('\n');
    await ingest('big', big, 'ndjson', TRICKY_QUERY);
    const stream = await t.engine.sql.stream(t.engine.localCaller(t.admin.tenant_id), 'SELECT _id FROM big', [], 60_000);
    const sizes: number[] = [];
    for await (const batch of stream.batches) sizes.push(JSON.stringify(batch).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(24 * 600_000);
    expect(sizes.length).toBeGreaterThan(3);
    for (const size of sizes) expect(size).toBeLessThan(LIMITS.pageBytes + 64 * 1024);
    expect((await exportDone({ sql: 'SELECT _id FROM big' })).row_count).toBe(24);
  });

  it('a row larger than a SQL result page fails the export at once, saying so', async () => {
    const created = expectStatus(await http.post('/v1/export', { sql: "SELECT repeat('x', 33 * 1024 * 1024) AS big" }), 202);
    const failed = await until('the export failed', async () => {
      const e = expectStatus(await http.get(`/v1/export/${created.export_id}`), 200);
      if (e.status === 'completed') throw new Error(`a row of ${e.size_bytes} bytes was written`);
      return e.status === 'failed' ? e : undefined;
    });
    expect(failed.error_message).toMatch(/^one row is larger than 32 MiB as JSON/);
    expect(expectStatus(await http.get(`/v1/admin/jobs/${created.job_id}`), 200).attempts).toBe(1);
  });

  it("CSV has the statement's columns; Parquet its types", async () => {
    const sql = "SELECT i, i / 4 AS quarter, 'row ' || i || ', \"quoted\"' AS label, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i) AS at, [i, i] AS pair FROM range(3000) t(i) ORDER BY i";
    const csv = await exportDone({ sql, format: 'csv' });
    const [header, ...rows] = await parseCsv((await download(csv)).toString());
    expect(header).toEqual(['i', 'quarter', 'label', 'at', 'pair']);
    expect(rows).toHaveLength(3000);
    expect(rows[5]).toEqual(['5', '1.25', 'row 5, "quoted"', '2024-01-01T00:00:05.000Z', '[5,5]']);
    const parquet = await exportDone({ sql, format: 'parquet' });
    const { types, rows: back } = await readParquet(await download(parquet));
    expect(types).toEqual({ i: 'BIGINT', quarter: 'DOUBLE', label: 'VARCHAR', at: 'TIMESTAMP WITH TIME ZONE', pair: 'JSON' });
    expect(back).toHaveLength(3000);
    expect(back[5]).toMatchObject({ i: '5', quarter: 1.25, label: 'row 5, "quoted"', pair: '[5,5]' });
  });
});

describe('memory', () => {
  it('stays flat: an export of about 200 MB holds one batch at a time', async () => {
    const rows = 500_000;
    const created = expectStatus(await http.post('/v1/export', { sql: `SELECT i, repeat('x', 400) AS pad FROM range(${rows}) t(i)`, format: 'csv' }), 202);
    // what stays live, not garbage V8 has yet to collect: each sample collects first
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const base = process.memoryUsage();
    let peak = 0;
    const sample = setInterval(() => {
      gc();
      const m = process.memoryUsage();
      peak = Math.max(peak, m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers);
    }, 100);
    let e: Json;
    try {
      e = await until('the big export', async () => {
        const x = t.engine.exports.get(t.engine.localCaller(t.admin.tenant_id), created.export_id);
        if (x.status === 'failed') throw new Error(x.error_message!);
        return x.status === 'completed' ? x : undefined;
      }, 120_000);
    } finally {
      clearInterval(sample);
    }
    expect(e.row_count).toBe(rows);
    expect(e.size_bytes).toBeGreaterThan(190 * 2 ** 20);
    console.log(`exported ${rows} rows, ${(e.size_bytes / 2 ** 20).toFixed(0)} MiB; JS heap and buffers grew at most ${(peak / 2 ** 20).toFixed(1)} MiB`);
    expect(peak).toBeLessThan(e.size_bytes / 4);
    expectStatus(await http.del(`/v1/export/${created.export_id}`), 200);
  }, 150_000); // the export itself may take its 120 s on a busy machine
});

describe('what an export may name', () => {
  const exportJobs = () => t.engine.jobs.list(t.admin.tenant_id, { type: 'export', limit: 10_000 }).length;

  it('none or several sources → 422 naming the members', async () => {
    for (const [body, members] of [
      [{ format: 'csv' }, ['view_id', 'search_request', 'sql']],
      [{ sql: 'SELECT 1', search_request: { text: 'x' } }, ['search_request', 'sql']],
      [{ sql: 'SELECT 1', view_id: 'view_x', search_request: {} }, ['view_id', 'search_request', 'sql']],
    ] as const) {
      const res = await http.post('/v1/export', body);
      expect(res.status, res.text).toBe(422);
      expect(res.body.detail.map((d: Json) => d.loc)).toEqual(members.map((m) => ['body', m]));
      expect(res.body.detail[0].msg).toContain('exactly one of view_id, search_request and sql');
    }
  });

  it('SQL the guard refuses → the same 422 as /v1/sql, and no job is made', async () => {
    const before = exportJobs();
    for (const sql of ["SELECT * FROM read_csv('/etc/passwd')", 'DROP TABLE hdfs', 'SELECT 1; SELECT 2']) {
      const res = await http.post('/v1/export', { sql });
      const direct = await http.post('/v1/sql', { sql });
      expect(res.status, res.text).toBe(422);
      expect(res.body).toEqual(direct.body);
      expect(res.body.detail.code).toBe('sql_not_allowed');
    }
    const nul = await http.post('/v1/export', { sql: 'SELECT 1\u0000' });
    expect(nul.status).toBe(422);
    const unknown = await http.post('/v1/export', { sql: 'SELECT * FROM no_such_table' });
    expect(unknown.status).toBe(400);
    expect(exportJobs()).toBe(before);
  });

  it('unknown view, unknown dataset → 404; bad fields and q → 422; all before any job', async () => {
    const before = exportJobs();
    expect((await http.post('/v1/export', { view_id: 'view_01jxxxxxxxxxxxxxxxxxxxxxxx' })).status).toBe(404);
    expect((await http.post('/v1/export', { search_request: { datasets: ['nope'] } })).status).toBe(404);
    const fields = await http.post('/v1/export', { search_request: {}, format: 'csv', fields: ['id', 'provenance.nope'] });
    expect(fields.status).toBe(422);
    expect(fields.body.detail[0].loc).toEqual(['body', 'fields', 1]);
    for (const format of ['csv', 'parquet']) {
      const twice = await http.post('/v1/export', { search_request: {}, format, fields: ['id', 'body', 'id'] });
      expect(twice.status, twice.text).toBe(422);
      expect(twice.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'fields', 2], msg: expect.stringContaining("'id' is named twice") })]);
    }
    expect((await http.post('/v1/export', { search_request: {}, fields: ['id'] })).status).toBe(422); // ndjson writes whole records
    expect((await http.post('/v1/export', { sql: 'SELECT 1', format: 'csv', fields: ['id'] })).status).toBe(422);
    expect((await http.post('/v1/export', { search_request: { q: 'level:(' } })).status).toBe(422);
    expect(exportJobs()).toBe(before);
  });
});

describe('the download URL', () => {
  let e: Json;
  beforeAll(async () => {
    e = await exportDone({ search_request: { datasets: ['tricky'] } });
  });

  it('tampered or expired → 403; another tenant or export in the URL → 403, never the file', async () => {
    const url = new URL(e.download_url);
    const variant = (change: (u: URL) => void) => {
      const u = new URL(url);
      change(u);
      return u.toString();
    };
    const secret = loadSecret(t.engine.dataDir);
    const expired = `${url.origin}${url.pathname}?${downloadQuery(secret, { tenant: t.admin.tenant_id, export_id: e.export_id, expires: Math.floor(Date.now() / 1000) - 1 })}`;
    const other = await exportDone({ search_request: { datasets: ['tricky'] } });
    for (const [what, bad] of [
      ['sig changed', variant((u) => u.searchParams.set('sig', u.searchParams.get('sig')!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))))],
      ['expires moved', variant((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)))],
      ['tenant changed', variant((u) => u.searchParams.set('tenant', 'ten_someone_else'))],
      ['no sig', variant((u) => u.searchParams.delete('sig'))],
      ['another export', variant((u) => (u.pathname = `/v1/export/${other.export_id}/download`))],
      ['expired', expired],
    ]) {
      const res = await fetchFile(bad);
      expect(res.status, what).toBe(403);
      expect(res.bytes.toString(), what).not.toContain('quoted');
    }
    expect((await fetchFile(e.download_url)).status).toBe(200);
  });

  it('needs no token (the signature is the authentication); a tenant member gets the URL from GET', async () => {
    const res = await fetchFile(e.download_url);
    expect(res.status).toBe(200);
    expect(ndjsonLines(res.bytes)).toHaveLength(TRICKY.length);
  });

  it('the engine opens the file directly for a caller of its tenant (no URL in local mode)', async () => {
    const caller = t.engine.localCaller(t.admin.tenant_id);
    expect(t.engine.exports.get(caller, e.export_id).download_url).toBeNull();
    const file = t.engine.exports.open(caller, e.export_id);
    expect(file).toMatchObject({ content_type: 'application/x-ndjson', filename: `${e.export_id}.ndjson`, size: e.size_bytes });
    const chunks: Buffer[] = [];
    for await (const c of file.body) chunks.push(c as Buffer);
    expect(ndjsonLines(Buffer.concat(chunks))).toHaveLength(TRICKY.length);
  });
});

describe('cancel, delete, list, retention', () => {
  it('cancel through the jobs API → cancelled, and no file', async () => {
    t.engine.exports.limits.batchPauseMs = 400; // 2000 records, 4 batches: time to cancel between them
    try {
      const created = expectStatus(await http.post('/v1/export', { search_request: { datasets: ['hdfs'] } }), 202);
      await until('the export under way', async () => {
        const e = expectStatus(await http.get(`/v1/export/${created.export_id}`), 200);
        return e.status === 'running' && e.row_count > 0 ? e : undefined;
      });
      expectStatus(await http.post(`/v1/admin/jobs/${created.job_id}/cancel`), 200);
      const e = await until('cancelled', async () => {
        const e = expectStatus(await http.get(`/v1/export/${created.export_id}`), 200);
        return e.status === 'cancelled' ? e : undefined;
      });
      expect(e).toMatchObject({ download_url: null, size_bytes: null, store_key: null });
      expect(e.row_count).toBeLessThan(2000);
      expect(filesOf(t.admin.tenant_id, 'exports').filter((f) => f.startsWith(created.export_id))).toEqual([]);
      expect(filesOf(t.admin.tenant_id, '.tmp')).toEqual([]);
    } finally {
      t.engine.exports.limits.batchPauseMs = 0;
    }
  });

  it('DELETE (admin) removes the file and the export; its URL then answers 404', async () => {
    const e = await exportDone({ search_request: { datasets: ['tricky'] }, format: 'csv' });
    expect(filesOf(t.admin.tenant_id, 'exports')).toContain(`${e.export_id}.csv`);
    expectStatus(await http.del(`/v1/export/${e.export_id}`), 200);
    expect(filesOf(t.admin.tenant_id, 'exports')).not.toContain(`${e.export_id}.csv`);
    expect((await http.get(`/v1/export/${e.export_id}`)).status).toBe(404);
    expect((await fetchFile(e.download_url)).status).toBe(404);
  });

  it('lists newest first, a page at a time', async () => {
    const all = expectStatus(await http.get('/v1/export?limit=500'), 200);
    expect(all.next_cursor).toBeNull();
    expect(all.exports.length).toBeGreaterThan(5);
    const ids = all.exports.map((x: Json) => x.export_id);
    expect(ids).toEqual([...ids].sort().reverse());
    const paged: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page: Json = expectStatus(await http.get(`/v1/export?limit=2${cursor ? `&cursor=${cursor}` : ''}`), 200);
      paged.push(...page.exports.map((x: Json) => x.export_id));
      if (!(cursor = page.next_cursor)) break;
    }
    expect(paged).toEqual(ids);
    expect((await http.get('/v1/export?limit=501')).status).toBe(422);
    expect((await http.get('/v1/export?cursor=nonsense')).status).toBe(422);
  });

  it('an export whose job could not be queued is removed at once; one left without a job, by the sweep an hour on', async () => {
    const listed = async () => expectStatus(await http.get('/v1/export?limit=500'), 200).exports.map((x: Json) => x.export_id);
    const before = await listed();
    const enqueue = t.engine.jobs.enqueue;
    t.engine.jobs.enqueue = () => Promise.reject(new DiskFull('the disk is full: a job could not be written'));
    try {
      expect((await http.post('/v1/export', { search_request: { datasets: ['tricky'] } })).status).toBe(507);
    } finally {
      t.engine.jobs.enqueue = enqueue;
    }
    expect(await listed()).toEqual(before);

    // as a process that died between storing the export and queueing its job leaves it
    const left = (exportId: string, createdMs: number) => ({
      export_id: exportId, tenant_id: t.admin.tenant_id, job_id: '', requested_by: t.admin.user_id, name: null, format: 'ndjson', gzip: false,
      view_id: null, search_request: { datasets: ['tricky'] }, sql: null, params: [], fields: null, row_count: 0, size_bytes: null,
      created_at: new Date(createdMs).toISOString(), completed_at: null, store_key: `${exportId}.ndjson`,
    });
    const [old, young] = [newId('exp'), newId('exp')];
    const store = openStore(t.engine.dataDir); // the engine's own environment: left open with it
    await store.meta.put(exportKey(t.admin.tenant_id, old), left(old, Date.now() - 3600_000 - 1000));
    await store.meta.put(exportKey(t.admin.tenant_id, young), left(young, Date.now()));
    expect(expectStatus(await http.get(`/v1/export/${old}`), 200).status).toBe('failed');
    await t.engine.exports.sweep();
    expect((await http.get(`/v1/export/${old}`)).status).toBe(404);
    expectStatus(await http.get(`/v1/export/${young}`), 200); // its job may yet be queued
    expectStatus(await http.del(`/v1/export/${young}`), 200);
  });

  it('the retention sweep removes files and exports past their retention period', async () => {
    const e = await exportDone({ search_request: { datasets: ['tricky'] } });
    await t.engine.retention.run(Date.now() + 6 * DAY_MS);
    expect(filesOf(t.admin.tenant_id, 'exports')).toContain(`${e.export_id}.ndjson`);
    await t.engine.retention.run(Date.parse(e.expires_at) + 1);
    expect(filesOf(t.admin.tenant_id, 'exports')).toEqual([]);
    expect((await http.get(`/v1/export/${e.export_id}`)).status).toBe(404);
  });
});

describe('tenants', () => {
  it("another tenant's export is 404 on every route, and not listed", async () => {
    const mine = await exportDone({ search_request: { datasets: ['tricky'] } });
    const b = await t.engine.directory.createTenant('bravo', 'b@example.test');
    const asB = client(() => t.url, { token: await t.engine.sessions.issue(b.user.user_id, 3600), tenant: b.tenant.tenant_id });
    expect((await asB.get(`/v1/export/${mine.export_id}`)).status).toBe(404);
    expect((await asB.del(`/v1/export/${mine.export_id}`)).status).toBe(404);
    expect(expectStatus(await asB.get('/v1/export'), 200).exports).toEqual([]);
    // a URL naming B as the tenant of A's export fails its signature
    const url = new URL(mine.download_url);
    url.searchParams.set('tenant', b.tenant.tenant_id);
    expect((await fetchFile(url.toString())).status).toBe(403);
    expectStatus(await http.get(`/v1/export/${mine.export_id}`), 200);
  });

  it("a tenant's deletion takes its export files with it", async () => {
    const p = await t.engine.directory.provisionTenant(t.admin.tenant_id, 'papa');
    const caller = { user_id: t.admin.user_id, kind: 'local' as const, tenant_id: p.tenant_id, role: 'Admin' as const };
    const created = await t.engine.exports.create(caller, { sql: 'SELECT 42 AS answer' });
    await t.engine.jobs.settled(p.tenant_id, created.job_id);
    expect(t.engine.exports.get(caller, created.export_id).status).toBe('completed');
    expect(filesOf(p.tenant_id, 'exports')).toEqual([`${created.export_id}.ndjson`]);
    const job = await t.engine.tenants.delete(t.engine.localCaller(t.admin.tenant_id), p.tenant_id);
    await t.engine.jobs.settled(job.tenant_id, job.job_id); // the deletion runs as a job of the platform's tenant
    expect(existsSync(join(t.engine.dataDir, 'blobs', p.tenant_id))).toBe(false);
  });
});
