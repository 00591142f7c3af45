/**
 * The SQL index and `POST /v1/sql` as the engine answers them, in process: the Loghub structured
 * CSVs as tables, grouped, filtered by time, joined and parameterized, checked against the CSV
 * files themselves; fields with several value types; deletion; schema rebuild; concurrent ingest.
 */
import { parseString } from '@fast-csv/parse';
import { createReadStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { DATA, tempDir } from './helpers/cli.js';

const LOGHUB = join(DATA, 'loghub');
const structured = (name: string) => join(LOGHUB, name, `${name}_2k.log_structured.csv`);

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;

type CsvRow = Record<string, string>;
const csvCache = new Map<string, CsvRow[]>();
function readCsv(path: string): Promise<CsvRow[]> {
  const cached = csvCache.get(path);
  if (cached) return Promise.resolve(cached);
  return new Promise((ok, fail) => {
    const rows: CsvRow[] = [];
    parseString(readFileSync(path, 'utf8'), { headers: true })
      .on('data', (r: CsvRow) => rows.push(r))
      .on('error', fail)
      .on('end', () => {
        csvCache.set(path, rows);
        ok(rows);
      });
  });
}

async function ingest(datasetId: string, input: string | Buffer, opts: Record<string, string> = {}) {
  if (!engine.datasets.ids(caller.tenant_id).includes(datasetId)) await engine.datasets.create(caller, { dataset_id: datasetId });
  const body = typeof input === 'string' && !input.includes('\n') ? createReadStream(input) : Readable.from([Buffer.from(input)]);
  const run = await engine.ingest.submit(caller, body, { dataset_id: datasetId, filename: 'data', ...opts });
  const done = await engine.ingest.wait(caller, run.ingest_run_id);
  expect(done.status, JSON.stringify(done.errors)).toBe('ready');
  return done;
}

const sql = (statement: string, params?: (string | number | boolean | null)[], extra: { limit?: number; cursor?: string } = {}) =>
  engine.sql.query(caller, { sql: statement, params, ...extra });
const rows = async (statement: string, params?: (string | number | boolean | null)[]) => (await sql(statement, params, { limit: 10_000 })).records.map((r) => r.metadata);

const countBy = (items: CsvRow[], key: (r: CsvRow) => string) => {
  const out = new Map<string, number>();
  for (const r of items) out.set(key(r), (out.get(key(r)) ?? 0) + 1);
  return out;
};

beforeAll(async () => {
  dir = tempDir('svc-sql-engine-');
  engine = await Engine.open(dir.path);
  await engine.init('sql', 'admin@example.com');
  caller = engine.localCaller();
  for (const name of ['Apache', 'HDFS', 'Linux', 'OpenSSH', 'OpenStack']) {
    const run = await ingest(name.toLowerCase(), structured(name), { format: 'csv' });
    expect(run.ready_for.sql_search).toBe(true);
  }
  await ingest('bgl', structured('BGL'), { format: 'csv', time_field: 'Timestamp' });
  await ingest('hdfs_templates', join(LOGHUB, 'HDFS', 'HDFS_2k.log_templates.csv'), { format: 'csv' });
});

afterAll(async () => {
  await engine?.close();
  dir?.remove();
});

describe('Loghub structured CSVs as tables', () => {
  it('has one table per dataset, with system columns and a column per field', async () => {
    expect((await rows('SHOW TABLES')).map((r) => r.name).sort()).toEqual(['apache', 'bgl', 'hdfs', 'hdfs_templates', 'linux', 'openssh', 'openstack']);
    const columns = Object.fromEntries((await rows('DESCRIBE hdfs')).map((r) => [r.column_name, r.column_type]));
    expect(columns).toMatchObject({ _id: 'VARCHAR', _seq: 'BIGINT', _source_key: 'VARCHAR', _line: 'INTEGER', _etag: 'VARCHAR', _time: 'TIMESTAMP', _title: 'VARCHAR', _body: 'VARCHAR' });
    expect(columns).toMatchObject({ LineId: 'BIGINT', Pid: 'BIGINT', Level: 'VARCHAR', Component: 'VARCHAR', EventId: 'VARCHAR' });
    for (const name of ['apache', 'bgl', 'hdfs', 'linux', 'openssh', 'openstack']) expect((await rows(`SELECT count(*) AS n FROM ${name}`))[0].n).toBe(2000);
  });

  it('GROUP BY level and component gives the counts of the CSV files', async () => {
    for (const name of ['HDFS', 'BGL', 'Linux', 'OpenStack']) {
      const expected = countBy(await readCsv(structured(name)), (r) => `${r.Level}|${r.Component}`);
      const got = await rows(`SELECT Level, Component, count(*) AS n FROM ${name.toLowerCase()} GROUP BY Level, Component ORDER BY n DESC, Level, Component`);
      expect(got.length).toBe(expected.size);
      for (const r of got) expect(r.n, `${name} ${r.Level}|${r.Component}`).toBe(expected.get(`${r.Level}|${r.Component}`));
      expect(typeof got[0].n).toBe('number'); // a JSON number, not DuckDB's BIGINT-as-string
    }
  });

  it('selects a time range on the record time (_time, UTC)', async () => {
    const csv = await readCsv(structured('BGL'));
    const secs = csv.map((r) => Number(r.Timestamp)).sort((a, b) => a - b);
    const [from, to] = [secs[300], secs[1500]];
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const expected = secs.filter((s) => s >= from && s < to).length;
    const got = await rows('SELECT count(*) AS n, min(_time) AS first, max(_time) AS last FROM bgl WHERE _time >= $1 AND _time < $2', [iso(from), iso(to)]);
    expect(got[0].n).toBe(expected);
    expect(got[0].first).toBe(iso(from));
    expect(Date.parse(got[0].last as string)).toBeLessThan(to * 1000);
    const hourly = await rows("SELECT date_trunc('hour', _time) AS hour, count(*) AS n FROM bgl GROUP BY 1 ORDER BY 1");
    expect(hourly.reduce((n, r) => n + (r.n as number), 0)).toBe(2000);
    expect(hourly[0].hour).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
  });

  it('joins two datasets of the tenant', async () => {
    const templates = new Map((await readCsv(join(LOGHUB, 'HDFS', 'HDFS_2k.log_templates.csv'))).map((r) => [r.EventId, r.EventTemplate]));
    const joined = await rows(
      'SELECT h.EventId, t.EventTemplate AS template, h.EventTemplate AS own, count(*) AS n FROM hdfs h JOIN hdfs_templates t ON h.EventId = t.EventId GROUP BY ALL ORDER BY n DESC',
    );
    expect(joined.reduce((n, r) => n + (r.n as number), 0)).toBe(2000);
    for (const r of joined) {
      expect(r.template).toBe(templates.get(r.EventId as string));
      expect(r.template).toBe(r.own);
    }
  });

  it('binds positional parameters of each JSON type', async () => {
    const csv = await readCsv(structured('HDFS'));
    const expected = csv.filter((r) => r.Level === 'INFO' && Number(r.Pid) > 500).length;
    expect((await rows('SELECT count(*) AS n FROM hdfs WHERE Level = $1 AND Pid > $2', ['INFO', 500]))[0].n).toBe(expected);
    expect((await rows('SELECT count(*) AS n FROM hdfs WHERE Level = ? AND Pid > ?', ['INFO', 500]))[0].n).toBe(expected);
    expect(await rows('SELECT $1 AS a, $2 AS b, $3 AS c, $4 IS NULL AS d', [1.5, true, 'x', null])).toEqual([{ a: 1.5, b: true, c: 'x', d: true }]);
    await expect(sql('SELECT $1, $2', [1])).rejects.toMatchObject({ name: 'Invalid', issues: [{ loc: ['body', 'params'] }] });
  });

  it('gives each row with an _id the full provenance of its record', async () => {
    const env = await sql('SELECT _id, _line, _body, Level FROM hdfs ORDER BY _line LIMIT 3');
    expect(env.mode).toBe('sql');
    expect(env.columns).toEqual([{ name: '_id', type: 'VARCHAR' }, { name: '_line', type: 'INTEGER' }, { name: '_body', type: 'VARCHAR' }, { name: 'Level', type: 'VARCHAR' }]);
    const csv = await readCsv(structured('HDFS'));
    env.records.forEach((r, i) => {
      expect(r.id).toBe(r.metadata._id);
      expect(r.body).toBe(csv[i].Content);
      expect(r.metadata._line).toBe(i + 2); // the header is line 1
      expect(r.provenance).toMatchObject({ dataset_id: 'hdfs', tenant_id: caller.tenant_id, source_bucket: expect.any(String), line: i + 2, transform_version: 2 });
      expect(r.provenance!.source_key).toMatch(/HDFS_2k|data/);
      expect(r.created_at).toMatch(/Z$/);
    });
    const grouped = await sql('SELECT Level, count(*) AS n FROM hdfs GROUP BY Level');
    for (const r of grouped.records) expect([r.provenance, r.created_at, r.title]).toEqual([null, null, null]);
  });

  it('returns numbers as numbers, times as ISO 8601, JSON as JSON', async () => {
    const [row] = await rows(
      "SELECT 42::BIGINT AS big, 12345678901234567890::HUGEINT AS huge, 1.25 AS dec, 2.5::DOUBLE AS dbl, sum(x) AS s, TIMESTAMP '2024-01-02 03:04:05.678' AS ts, DATE '2024-01-02' AS d, '{\"a\":[1,2]}'::JSON AS j, [1, 2] AS l, {'k': 'v'} AS st FROM (VALUES (1), (2)) t(x)",
    );
    expect(row).toEqual({ big: 42, huge: '12345678901234567890', dec: 1.25, dbl: 2.5, s: 3, ts: '2024-01-02T03:04:05.678Z', d: '2024-01-02', j: { a: [1, 2] }, l: [1, 2], st: { k: 'v' } });
  });

  it('pages through an answer with a cursor, every page from the same execution', async () => {
    const first = await sql('SELECT LineId FROM hdfs ORDER BY LineId', undefined, { limit: 700 });
    expect(first.total).toEqual({ relation: 'eq', value: 2000 });
    const seen = first.records.map((r) => r.metadata.LineId);
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await sql('SELECT LineId FROM hdfs ORDER BY LineId', undefined, { cursor, limit: 700 });
      seen.push(...page.records.map((r) => r.metadata.LineId));
      expect(page.search_id).toBe(first.search_id);
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    await expect(sql('SELECT 1', undefined, { cursor: first.next_cursor! })).rejects.toMatchObject({ name: 'Invalid', issues: [{ loc: ['body', 'cursor'] }] });
    await expect(sql('SELECT 1', undefined, { cursor: 'not-a-cursor' })).rejects.toMatchObject({ name: 'Invalid' });
    const small = await sql('SELECT * FROM hdfs LIMIT 5');
    expect([small.records.length, small.next_cursor, small.total.value]).toEqual([5, null, 5]);
  });

  it('answers a wrong statement with DuckDB’s message', async () => {
    await expect(sql('SELEC 1')).rejects.toMatchObject({ code: 'sql_syntax_error', status: 400, message: expect.stringContaining('syntax error') });
    await expect(sql('SELECT nope FROM hdfs')).rejects.toMatchObject({ code: 'sql_error', status: 400, message: expect.stringContaining('nope') });
    await expect(sql('SELECT * FROM missing')).rejects.toMatchObject({ code: 'sql_error', status: 400, message: expect.stringContaining('missing') });
  });
});

describe('fields with several value types', () => {
  it('gives a Loghub CSV column one type: HDFS Time (203615, 000012) is text, each value as written', async () => {
    const csv = await readCsv(structured('HDFS'));
    const got = await rows('SELECT LineId, Time FROM hdfs ORDER BY LineId');
    expect(got).toHaveLength(2000);
    got.forEach((r, i) => expect(r.Time).toBe(csv[i].Time));
    expect(got.some((r) => String(r.Time).startsWith('0'))).toBe(true);
    await expect(rows('SELECT Time__i64 FROM hdfs')).rejects.toThrow();
  });

  it('renames a column when its field gains a value type, losing no value', async () => {
    await ingest('mixed', ['{"v": 1, "n": 1}', '{"v": 2, "n": 2}'].join('\n') + '\n', { format: 'ndjson' });
    expect(await rows('SELECT v FROM mixed ORDER BY n')).toEqual([{ v: 1 }, { v: 2 }]);
    await ingest('mixed', ['{"v": "three", "n": 3}', '{"v": 4.5, "n": 4}', '{"v": {"deep": true}, "n": 5}'].join('\n') + '\n', { format: 'ndjson' });
    expect(await rows('SELECT v__i64, v__str, v__f64, v__object, "v.deep" AS deep FROM mixed ORDER BY n')).toEqual([
      { v__i64: 1, v__str: null, v__f64: null, v__object: null, deep: null },
      { v__i64: 2, v__str: null, v__f64: null, v__object: null, deep: null },
      { v__i64: null, v__str: 'three', v__f64: null, v__object: null, deep: null },
      { v__i64: null, v__str: null, v__f64: 4.5, v__object: null, deep: null },
      { v__i64: null, v__str: null, v__f64: null, v__object: { deep: true }, deep: true },
    ]);
    const field = engine.fields.list(caller, { dataset_id: 'mixed', prefix: 'v' }).find((f) => f.field_path === 'v')!;
    expect(field.variants.map((v) => [v.physical_field, v.fast]).sort()).toEqual([['v__f64', true], ['v__i64', true], ['v__object', true], ['v__str', true]]);
  });

  it('reports fast for what the SQL table holds', () => {
    const fields = engine.fields.list(caller, { dataset_id: 'hdfs' });
    for (const f of fields) {
      expect(f.stored).toBe(true);
      expect(f.fast, f.field_path).toBe(true);
      for (const v of f.variants) expect(v.fast).toBe(true);
    }
    expect(fields.find((f) => f.field_path === 'body')).toMatchObject({ indexed: true, fast: true });
  });
});

describe('records leave the table when deleted', () => {
  it('drops a deleted source’s records at once, and a deleted dataset’s table', async () => {
    await ingest('src', '{"a": 1}\n{"a": 2}\n{"a": 3}\n', { format: 'ndjson' });
    expect((await rows('SELECT count(*) AS n FROM src'))[0].n).toBe(3);
    const source = engine.sources.list(caller.tenant_id, 'src')[0];
    await engine.jobs.settled(caller.tenant_id, (await engine.deletion.source(caller, source.source_id)).job_id);
    expect((await rows('SELECT count(*) AS n FROM src'))[0].n).toBe(0);

    await ingest('gone', '{"a": 1}\n{"a": 2}\n', { format: 'ndjson' });
    expect((await rows('SELECT count(*) AS n FROM gone'))[0].n).toBe(2);
    await engine.jobs.settled(caller.tenant_id, (await engine.deletion.dataset(caller, 'gone')).job_id);
    expect((await rows('SHOW TABLES')).map((r) => r.name)).not.toContain('gone');
    await expect(sql('SELECT * FROM gone')).rejects.toMatchObject({ code: 'sql_error' });
  });
});

describe('schema rebuild', () => {
  it('recounts fields and promotes a new generation while queries go on answering from the old one', async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => JSON.stringify({ i, level: ['INFO', 'WARN'][i % 2], code: i === 7 ? 'seven' : i }));
    await ingest('big', lines.join('\n') + '\n', { format: 'ndjson', id_field: 'i' });
    expect((await rows('SELECT count(code__i64) AS a, count(code__str) AS b FROM big'))[0]).toEqual({ a: 29_999, b: 1 });
    // record 7 is replaced by one whose code is a number: no string is left, yet discovery still counts one
    await ingest('big', JSON.stringify({ i: 7, level: 'INFO', code: 7 }) + '\n', { format: 'ndjson', id_field: 'i' });
    expect((await rows('SELECT count(code__i64) AS a, count(code__str) AS b FROM big'))[0]).toEqual({ a: 30_000, b: 0 });
    expect(engine.fields.list(caller, { dataset_id: 'big', prefix: 'code' })[0].variants).toHaveLength(2);

    const job = await engine.sql.rebuildSchema(caller, 'big');
    expect(job).toMatchObject({ dataset_id: 'big', status: 'pending', generation: null });
    const answers: unknown[] = [];
    let duringRebuild = 0;
    let done = false;
    const settled = engine.jobs.settled(caller.tenant_id, job.job_id).then(() => (done = true));
    while (!done) {
      const running = engine.jobs.get(caller.tenant_id, job.job_id).status === 'running';
      answers.push((await rows('SELECT count(*) AS n FROM big'))[0].n);
      if (running && engine.jobs.get(caller.tenant_id, job.job_id).status === 'running') duringRebuild++;
    }
    await settled;
    expect(duringRebuild).toBeGreaterThan(0);
    expect(new Set(answers)).toEqual(new Set([30_000]));

    expect(engine.sql.schemaRebuild(caller, 'big', job.job_id)).toMatchObject({ status: 'succeeded', generation: 2, record_count: 30_000, field_count: 3, error_message: null });
    expect((await rows('DESCRIBE big')).map((r) => r.column_name).filter((c) => !String(c).startsWith('_'))).toEqual(['level', 'code']); // i is the id, body the record's
    expect((await rows('SELECT sum(code) AS s FROM big'))[0].s).toBe((29_999 * 30_000) / 2);
    expect(engine.fields.list(caller, { dataset_id: 'big', prefix: 'code' })[0]).toMatchObject({ type: 'i64', variants: [{ physical_field: 'code', value_type: 'i64', fast: true, seen_count: 30_000 }], fast: true, seen_count: 30_000 });
    expect(() => engine.sql.schemaRebuild(caller, 'hdfs', job.job_id)).toThrow(/not found/);
  });
});

describe('concurrent ingest and SQL', () => {
  it('never shows part of a run: every answer holds whole runs', async () => {
    const PER_RUN = 3000; // two ingest batches per run; a run this short shows whole (a long one in steps: sql-held.test.ts)
    const RUNS = 6;
    await engine.datasets.create(caller, { dataset_id: 'live' });
    const runs = [];
    for (let r = 0; r < RUNS; r++) {
      const body = Array.from({ length: PER_RUN }, (_, i) => JSON.stringify({ run: r, i, msg: `event ${i} of run ${r}` })).join('\n') + '\n';
      runs.push(await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: 'live', format: 'ndjson', filename: `r${r}.ndjson` }));
    }
    const seen = new Set<number>();
    let done = false;
    const all = Promise.all(runs.map((r) => engine.ingest.wait(caller, r.ingest_run_id))).then(() => (done = true));
    while (!done) {
      const [row] = await rows('SELECT count(*) AS n, coalesce(max(_seq), 0) AS m, count(DISTINCT run) AS runs FROM live').catch(() => [{ n: 0, m: 0, runs: 0 }]);
      expect((row.n as number) % PER_RUN).toBe(0);
      expect(row.m).toBe(row.n);
      expect(row.runs).toBe((row.n as number) / PER_RUN);
      seen.add(row.n as number);
    }
    await all;
    expect((await rows('SELECT count(*) AS n FROM live'))[0].n).toBe(PER_RUN * RUNS);
    expect(seen.size).toBeGreaterThan(1);
  });
});

describe('across reopen', () => {
  it('rebuilds a lost SQL database from the records, and applies deletions made while it was closed', async () => {
    const t = caller.tenant_id;
    const before = (await rows('SELECT count(*) AS n, sum(LineId) AS s FROM hdfs'))[0];
    await engine.close();
    for (const f of readdirSync(join(dir.path, 'sql'))) rmSync(join(dir.path, 'sql', f), { recursive: true, force: true });
    engine = await Engine.open(dir.path);
    caller = engine.localCaller();
    expect((await rows('SELECT count(*) AS n, sum(LineId) AS s FROM hdfs'))[0]).toEqual(before);

    await engine.close();
    engine = await Engine.open(dir.path);
    caller = engine.localCaller();
    // the tenant's SQL database is not open yet: the deletion leaves SQL tombstones for it
    const source = engine.sources.list(t, 'hdfs_templates')[0];
    await engine.jobs.settled(t, (await engine.deletion.source(caller, source.source_id)).job_id);
    expect((await rows('SELECT count(*) AS n FROM hdfs_templates'))[0].n).toBe(0);
    expect((await rows('SELECT count(*) AS n FROM hdfs'))[0]).toEqual({ n: 2000 });
  });
});
