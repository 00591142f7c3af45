/**
 * `POST /v1/sql`, the schema rebuild endpoints and `svc sql`, end to end: a real server on
 * loopback (with a short statement timeout and a small memory limit), and the CLI both through
 * that server and on a data dir of its own.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, until } from './helpers/http.js';

const HDFS = join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv');

let dir: ReturnType<typeof tempDir>;
let server: Server;
let api: ReturnType<typeof client>;
let admin: { tenant_id: string; token: string };

beforeAll(async () => {
  dir = tempDir('svc-sql-api-');
  admin = init(dir.path);
  process.env.SVC_SQL_TIMEOUT_MS = '1500';
  process.env.SVC_SQL_MEMORY_LIMIT = '256MB';
  process.env.TZ = 'America/New_York'; // the server's zone must not shift SQL times
  server = await serve(dir.path);
  api = client(server.url, { token: admin.token, tenant: admin.tenant_id });
  expect((await api.post('/v1/admin/datasets', { dataset_id: 'hdfs' })).status).toBe(201);
  const r = svc(['ingest', 'hdfs', HDFS, '--wait', '--output', 'json'], { dataDir: dir.path });
  expect(r.status, r.stderr).toBe(0);
  expect(r.json().ready_for.sql_search).toBe(true);
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('POST /v1/sql', () => {
  it('answers in the search envelope with mode sql, columns and one record per row', async () => {
    const res = await api.post('/v1/sql', { sql: 'SELECT Level, count(*) AS n FROM hdfs GROUP BY Level ORDER BY n DESC' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ search_id: expect.stringMatching(/^srch_/), took_ms: expect.any(Number), mode: 'sql', total: { relation: 'eq', value: 2 }, aggregations: {}, next_cursor: null });
    expect(res.body.columns).toEqual([{ name: 'Level', type: 'VARCHAR' }, { name: 'n', type: 'BIGINT' }]);
    const counts = res.body.records.map((r: any) => r.metadata.n);
    expect(counts).toEqual([...counts].sort((x: number, y: number) => y - x));
    expect(res.body.records.map((r: any) => r.metadata.Level)).toEqual(['INFO', 'WARN']);
    expect(res.body.records.reduce((n: number, r: any) => n + r.metadata.n, 0)).toBe(2000);
    for (const r of res.body.records) expect(r).toMatchObject({ provenance: null, score_kind: 'none', snippets: [] });
  });

  it('keeps an answer to 32 MiB of JSON: more rows are cut (total gte), one larger row is refused', async () => {
    const cut = await api.post('/v1/sql', { sql: "SELECT i, repeat('a', 1000000) AS s FROM range(60) t(i) ORDER BY i", limit: 5 });
    expect(cut.status, cut.text.slice(0, 300)).toBe(200);
    expect(cut.body.total.relation).toBe('gte');
    expect(cut.body.total.value).toBeGreaterThan(25);
    expect(cut.body.total.value).toBeLessThan(34);
    expect(cut.body.records.map((r: any) => r.metadata.i)).toEqual([0, 1, 2, 3, 4]);
    const next = await api.post('/v1/sql', { sql: "SELECT i, repeat('a', 1000000) AS s FROM range(60) t(i) ORDER BY i", limit: 5, cursor: cut.body.next_cursor });
    expect(next.body.records.map((r: any) => r.metadata.i)).toEqual([5, 6, 7, 8, 9]);
    const huge = await api.post('/v1/sql', { sql: "SELECT repeat('a', 40000000) AS s" });
    expect(huge.status).toBe(422);
    expect(huge.body.detail).toMatchObject({ code: 'sql_result_too_large', message: expect.stringContaining('32 MiB') });
  });

  it('answers a statement with a NUL byte as bad input, not a 500', async () => {
    for (const sql of ['SELECT 1\u0000', "SELECT 'a\u0000b' AS s", '\u0000']) {
      const res = await api.post('/v1/sql', { sql });
      expect(res.status, `${JSON.stringify(sql)}: ${res.text}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
  });

  it('carries provenance for rows that select _id, and takes parameters', async () => {
    const res = await api.post('/v1/sql', { sql: 'SELECT _id, _line, _source_key, Pid FROM hdfs WHERE Pid = $1 ORDER BY _line LIMIT 2', params: [148] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [first] = res.body.records;
    expect(first.metadata).toMatchObject({ _line: 2, Pid: 148 });
    expect(first.provenance).toEqual({
      dataset_id: 'hdfs', tenant_id: admin.tenant_id, source_bucket: expect.any(String), source_key: first.metadata._source_key,
      source_etag: expect.stringMatching(/^[0-9a-f]+$/), line: 2, transform_version: 2,
    });
    expect(first.body).toContain('PacketResponder 1 for block blk_38865049064139660 terminating');
  });

  it('pages with limit (default 1000, at most 10,000) and cursor', async () => {
    const first = await api.post('/v1/sql', { sql: 'SELECT LineId FROM hdfs ORDER BY LineId' });
    expect(first.body.records).toHaveLength(1000);
    expect(first.body.total).toEqual({ relation: 'eq', value: 2000 });
    const second = await api.post('/v1/sql', { sql: 'SELECT LineId FROM hdfs ORDER BY LineId', cursor: first.body.next_cursor });
    expect(second.body.records.map((r: any) => r.metadata.LineId)).toEqual(Array.from({ length: 1000 }, (_, i) => 1001 + i));
    expect(second.body.next_cursor).toBeNull();
    expect((await api.post('/v1/sql', { sql: 'SELECT 1', limit: 10_001 })).status).toBe(422);
    expect((await api.post('/v1/sql', { sql: 'SELECT 1', limit: 0 })).status).toBe(422);
    expect((await api.post('/v1/sql', { sql: 'SELECT 1', params: [{ a: 1 }] })).status).toBe(422);
    expect((await api.post('/v1/sql', { sql: 'SELECT 1', extra: true })).status).toBe(422);
    const bad = await api.post('/v1/sql', { sql: 'SELECT $1' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['body', 'params']);
  });

  it('gives syntax and binding errors as 400 with DuckDB’s message, refusals as 422', async () => {
    const syntax = await api.post('/v1/sql', { sql: 'SELEC 1' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.detail).toMatchObject({ code: 'sql_syntax_error', message: expect.stringContaining('syntax error at or near "SELEC"') });
    const binder = await api.post('/v1/sql', { sql: 'SELECT nope FROM hdfs' });
    expect(binder.status).toBe(400);
    expect(binder.body.detail).toMatchObject({ code: 'sql_error', message: expect.stringContaining('Binder Error') });
    const refused = await api.post('/v1/sql', { sql: 'DROP VIEW hdfs' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatchObject({ code: 'sql_not_allowed', message: expect.stringContaining('DROP is not allowed') });
  });

  it('stops a statement at the timeout and one that needs too much memory, each with its own code', async () => {
    const started = Date.now();
    const slow = await api.post('/v1/sql', { sql: 'SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3' });
    expect(slow.status).toBe(422);
    expect(slow.body.detail).toMatchObject({ code: 'sql_timeout', message: expect.stringContaining('1.5 s') });
    expect(Date.now() - started).toBeLessThan(10_000);
    const big = await api.post('/v1/sql', { sql: 'SELECT list(i) FROM range(300000000) t(i)' });
    expect(big.status).toBe(422);
    expect(big.body.detail).toMatchObject({ code: 'sql_memory_limit', message: expect.stringContaining('256MB') });
    expect((await api.post('/v1/sql', { sql: 'SELECT count(*) AS n FROM hdfs' })).body.records[0].metadata).toEqual({ n: 2000 });
  });

  it('reads and writes times in UTC whatever the server’s zone', async () => {
    const res = await api.post('/v1/sql', { sql: "SELECT current_setting('TimeZone') AS tz, TIMESTAMP '2024-01-01 10:00:00' = TIMESTAMPTZ '2024-01-01 10:00:00+00' AS same, TIMESTAMPTZ '2024-01-01 12:00:00+02' AS t" });
    expect(res.body.records[0].metadata).toEqual({ tz: 'UTC', same: true, t: '2024-01-01T10:00:00.000Z' });
  });

  it('is for members of the tenant only', async () => {
    expect((await api.post('/v1/sql', { sql: 'SELECT 1' }, { token: null })).status).toBe(401);
    expect((await api.post('/v1/sql', { sql: 'SELECT 1' }, { tenant: null })).status).toBe(400);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await api.get('/openapi.json', { token: null, tenant: null })).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/sql', '/v1/admin/datasets/{dataset_id}/schema/rebuild', '/v1/admin/datasets/{dataset_id}/schema/rebuilds/{job_id}']));
  });
});

describe('schema rebuild and fields over HTTP', () => {
  it('runs a rebuild job and polls it; fields report fast', async () => {
    const started = await api.post('/v1/admin/datasets/hdfs/schema/rebuild');
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ job_id: expect.stringMatching(/^job_/), dataset_id: 'hdfs', tenant_id: admin.tenant_id });
    const done = await until('schema rebuild', async () => {
      const res = await api.get(`/v1/admin/datasets/hdfs/schema/rebuilds/${started.body.job_id}`);
      expect(res.status).toBe(200);
      return res.body.status === 'succeeded' || res.body.status === 'failed' ? res.body : undefined;
    });
    expect(done).toMatchObject({ status: 'succeeded', generation: 2, record_count: 2000, error_message: null });
    expect((await api.get(`/v1/admin/datasets/nope/schema/rebuilds/${started.body.job_id}`)).status).toBe(404);
    expect((await api.post('/v1/admin/datasets/nope/schema/rebuild')).status).toBe(404);
    const fields = (await api.get('/v1/admin/fields?dataset_id=hdfs')).body.fields;
    const time = fields.find((f: any) => f.field_path === 'Time');
    // one type for the whole CSV column: 203615 and 000012 are both text
    expect(time.variants.map((v: any) => [v.physical_field, v.value_type, v.fast, v.stored])).toEqual([['Time', 'str', true, true]]);
    expect(fields.every((f: any) => f.fast)).toBe(true);
  });
});

describe('svc sql', () => {
  const run = (args: string[], dataDir = dir.path) => svc(['sql', ...args], { dataDir });

  it('prints json, ndjson, csv and a table, through the server holding the data dir', () => {
    const statement = 'SELECT Level, count(*) AS n FROM hdfs WHERE Pid > $1 GROUP BY Level ORDER BY Level';
    const json = run([statement, '--param', '0', '--output', 'json']);
    expect(json.status, json.stderr).toBe(0);
    expect(json.json()).toMatchObject({ mode: 'sql', columns: [{ name: 'Level' }, { name: 'n' }] });
    const ndjson = run([statement, '--param', '0', '--output', 'ndjson']);
    const lines = ndjson.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.Level)).toEqual(['INFO', 'WARN']);
    expect(lines.reduce((n, l) => n + l.n, 0)).toBe(2000);
    const csv = run([statement, '--param', '0', '--output', 'csv']);
    expect(csv.stdout.trim().split('\n')).toEqual(['Level,n', ...lines.map((l) => `${l.Level},${l.n}`)]);
    const table = run([statement, '--param', '0', '--output', 'table']);
    expect(table.stdout.split('\n')[0]).toMatch(/^LEVEL\s+N$/);
  });

  it('names the refusal and exits non-zero', () => {
    const r = run(['DELETE FROM hdfs']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/DELETE is not allowed/);
  });

  it('works on a data dir of its own, with no server', () => {
    const own = tempDir('svc-sql-local-');
    try {
      init(own.path);
      expect(svc(['datasets', 'create', 'hdfs'], { dataDir: own.path }).status).toBe(0);
      const ingest = svc(['ingest', 'hdfs', HDFS, '--wait', '--output', 'json'], { dataDir: own.path });
      expect(ingest.status, ingest.stderr).toBe(0);
      const page = run(['SELECT LineId, "Time" FROM hdfs ORDER BY LineId', '--limit', '3', '--output', 'json'], own.path);
      expect(page.status, page.stderr).toBe(0);
      expect(page.json().records.map((r: any) => r.metadata.LineId)).toEqual([1, 2, 3]);
      const next = run(['SELECT LineId, "Time" FROM hdfs ORDER BY LineId', '--limit', '3', '--cursor', page.json().next_cursor, '--output', 'ndjson'], own.path);
      expect(next.status, next.stderr).toBe(0);
      expect(next.stdout.trim().split('\n').map((l) => JSON.parse(l).LineId)).toEqual([4, 5, 6]);
    } finally {
      own.remove();
    }
  });
});
