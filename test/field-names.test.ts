/**
 * Field names that do not surprise, over a real server: a field chosen as body, title or time stays
 * queryable under its own name (search, SQL, the fields list); a CSV column has one type per
 * object; a search that names a field no dataset has says so; every field lists its variants.
 * Data: the shipped Loghub structured CSVs.
 */
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Store } from '../src/engine/store/db.js';
import { MAX_KEY } from '../src/engine/store/db.js';
import { keys } from '../src/engine/store/keys.js';
import { useApp } from './helpers/app.js';
import { DATA } from './helpers/cli.js';
import { csvCells } from './helpers/csv.js';
import { expectStatus, until, type Json } from './helpers/http.js';

const LOGHUB = ['Apache', 'BGL', 'HDFS', 'Linux', 'OpenSSH', 'OpenStack'].map((n) => join(DATA, `loghub/${n}/${n}_2k.log_structured.csv`));
const HDFS = LOGHUB[2];

const { t, http } = useApp();

function csvRows(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, 'utf8').split(/\r?\n/).filter((l) => l !== '');
  const names = csvCells(header);
  return lines.map((line) => Object.fromEntries(csvCells(line).map((v, i) => [names[i], v])));
}

async function ingest(dataset: string, body: string, query: string): Promise<Json> {
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: dataset }), 201);
  const run = expectStatus(await http.call('POST', `/v1/ingest/sources/${dataset}/stream?${query}`, { body, contentType: 'application/octet-stream' }), 202);
  const done = await until(`run ${run.ingest_run_id}`, async () => {
    const r = expectStatus(await http.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(done.status, JSON.stringify(done)).toBe('ready');
  expect(done.documents.malformed).toBe(0);
  return done;
}

const sql = async (statement: string) => expectStatus(await http.post('/v1/sql', { sql: statement, limit: 10_000 }), 200);
const search = async (req: Json) => expectStatus(await http.post('/v1/search', { limit: 100, ...req }), 200);
const fields = async (dataset: string): Promise<Json[]> => expectStatus(await http.get(`/v1/admin/fields?dataset_id=${dataset}`), 200).fields;

const hdfs = csvRows(HDFS);
const withBlock = hdfs.filter((r) => /\bblock\b/i.test(r.Content)).length;

describe('a field chosen as body keeps its name', () => {
  it('HDFS CSV: Content is the body and answers as Content in SQL, q, where, sort and aggregations', async () => {
    await ingest('hdfs', readFileSync(HDFS, 'utf8'), 'format=csv');
    expect(withBlock).toBeGreaterThan(100);
    expect(withBlock).toBeLessThan(2000);

    const selected = await sql('SELECT LineId, Content, _body FROM hdfs ORDER BY LineId');
    expect(selected.records).toHaveLength(2000);
    selected.records.forEach((r: Json, i: number) => {
      expect(r.metadata.Content).toBe(hdfs[i].Content);
      expect(r.metadata._body).toBe(hdfs[i].Content);
    });
    expect((await sql("SELECT count(*) AS n FROM hdfs WHERE Content ILIKE '%block%'")).records[0].metadata.n).toBe(hdfs.filter((r) => /block/i.test(r.Content)).length);

    const byQ = await search({ datasets: ['hdfs'], q: 'Content:"block"' });
    expect(byQ.total.value).toBe(withBlock);
    expect(byQ.warnings).toBeUndefined();
    const phrase = await search({ datasets: ['hdfs'], q: 'Content:"Received block"' });
    expect(phrase.total.value).toBe(hdfs.filter((r) => /\bReceiv\w* block\b/i.test(r.Content)).length);
    expect(phrase.total.value).toBeGreaterThan(0);
    expect((await search({ datasets: ['hdfs'], q: 'Content:/blk_-?\\d+/' })).total.value).toBe(hdfs.filter((r) => /blk_-?\d+/.test(r.Content)).length);
    expect((await search({ datasets: ['hdfs'], q: 'Content:*' })).total.value).toBe(2000);

    const byWhere = await search({ datasets: ['hdfs'], where: [{ field: 'Content', op: 'contains', value: 'block' }] });
    expect(byWhere.total.value).toBe(hdfs.filter((r) => r.Content.toLowerCase().includes('block')).length);
    expect(byWhere.warnings).toBeUndefined();
    const one = hdfs[0].Content;
    expect((await search({ datasets: ['hdfs'], where: [{ field: 'Content', op: 'eq', value: one }] })).total.value).toBe(hdfs.filter((r) => r.Content.toLowerCase() === one.toLowerCase()).length);

    const agg = await search({ datasets: ['hdfs'], limit: 1, aggregations: [{ name: 'contents', type: 'terms', field: 'Content', size: 1000 }] });
    const buckets = (agg.aggregations.contents.buckets ?? agg.aggregations.contents) as Json[];
    expect(buckets.length).toBeGreaterThan(0);
    for (const bucket of buckets.slice(0, 5)) expect(bucket.doc_count ?? bucket.count).toBe(hdfs.filter((r) => r.Content === bucket.key).length);
    const sorted = await search({ datasets: ['hdfs'], limit: 3, sort: [{ field: 'Content', order: 'asc' }] });
    const least = hdfs.map((r) => r.Content).sort((x, y) => (x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : 0))[0];
    expect(sorted.records[0].body).toBe(least);
    expect(sorted.warnings).toBeUndefined();
    const collapsed = await search({ datasets: ['hdfs'], collapse: { field: 'Content' } });
    expect(collapsed.total.value).toBe(new Set(hdfs.map((r) => JSON.stringify(r.Content))).size);
  });

  it('lists Content as a field with its SQL column', async () => {
    const content = (await fields('hdfs')).find((f) => f.field_path === 'Content');
    expect(content).toMatchObject({ type: 'str', seen_count: 2000, fast: true });
    expect(content.variants).toEqual([expect.objectContaining({ physical_field: 'Content', value_type: 'str', sample_value: hdfs[0].Content, seen_count: 2000 })]);
  });

  it('NDJSON: message as body answers as message; a configured body and title field keep their names', async () => {
    const lines = hdfs.map((r) => JSON.stringify({ id: `l${r.LineId}`, message: r.Content, subject: r.EventTemplate, level: r.Level }));
    await ingest('ndj', lines.join('\n') + '\n', 'format=ndjson');
    expect((await search({ datasets: ['ndj'], q: 'message:"block"' })).total.value).toBe(withBlock);
    expect((await search({ datasets: ['ndj'], q: 'message:"Received block"' })).total.value).toBe(hdfs.filter((r) => /\bReceiv\w* block\b/i.test(r.Content)).length);
    expect((await search({ datasets: ['ndj'], where: [{ field: 'message', op: 'contains', value: 'block' }] })).total.value).toBe(hdfs.filter((r) => r.Content.toLowerCase().includes('block')).length);
    const got = await sql('SELECT message, _body FROM ndj');
    for (const r of got.records) expect(r.metadata.message).toBe(r.metadata._body);

    await ingest('cfg', lines.join('\n') + '\n', 'format=ndjson&body_field=level&title_field=subject');
    expect((await search({ datasets: ['cfg'], q: 'level:WARN' })).total.value).toBe(hdfs.filter((r) => r.Level === 'WARN').length);
    expect((await search({ datasets: ['cfg'], q: 'subject:"PacketResponder"' })).total.value).toBe(hdfs.filter((r) => /PacketResponder/.test(r.EventTemplate)).length);
    const cols = (await sql('SELECT level, subject, message FROM cfg WHERE level = \'WARN\'')).records;
    expect(cols).toHaveLength(hdfs.filter((r) => r.Level === 'WARN').length);
    // message is a field of its own here: the body came from level
    expect((await search({ datasets: ['cfg'], q: 'message:"block"' })).total.value).toBe(0);
  });
});

describe('records of transform version 1', () => {
  it('answer to Content once a reindex parses their object again, even with its config unchanged', async () => {
    const run = await ingest('old', readFileSync(HDFS, 'utf8'), 'format=csv');
    // make the run and its records what version 1 made: no names, Time a number where it round-tripped
    const store = (t.engine as unknown as { store: Store }).store;
    const tenant = t.admin.tenant_id;
    store.meta.transactionSync(() => {
      const state = store.meta.get(keys.run(tenant, run.ingest_run_id));
      delete state.transform_version;
      store.meta.put(keys.run(tenant, run.ingest_run_id), state);
      for (const { key, value } of store.records.getRange({ start: [tenant, 'old', 0], end: [tenant, 'old', MAX_KEY] })) {
        const { names: _n, ...rec } = value;
        const time = String(rec.metadata.Time);
        store.records.put(key, { ...rec, transform_version: 1, metadata: { ...rec.metadata, Time: String(Number(time)) === time ? Number(time) : time } });
      }
    });
    expect((await search({ datasets: ['old'], q: 'Content:"block"' })).total.value).toBe(0);
    expect((await search({ datasets: ['old'], q: 'Time:203615' })).records[0].provenance.transform_version).toBe(1);

    const job = expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'old' }), 202);
    const done = await until(`reindex ${job.job_id}`, async () => {
      const j = expectStatus(await http.get(`/v1/admin/reindex/jobs/${job.job_id}`), 200);
      return ['succeeded', 'failed', 'cancelled'].includes(j.status) ? j : undefined;
    }, 60_000);
    expect(done).toMatchObject({ status: 'succeeded', object_status_counts: { done: 1 } });
    expect(done.objects?.[0]?.unchanged).not.toBe(true);
    const after = await search({ datasets: ['old'], q: 'Content:"block"' });
    expect(after.total.value).toBe(withBlock);
    expect(after.records.every((r: Json) => r.provenance.transform_version === 2 && typeof r.metadata.Time === 'string')).toBe(true);
    expect((await sql('SELECT count(*) AS n FROM old WHERE Content = _body')).records[0].metadata.n).toBe(2000);
  });
});

describe('a CSV column has one type per object', () => {
  it('HDFS Date and Time are string columns: every value as written, no __i64/__str', async () => {
    const got = await sql('SELECT LineId, Date, Time, Pid FROM hdfs ORDER BY LineId');
    expect(got.columns).toEqual([{ name: 'LineId', type: 'BIGINT' }, { name: 'Date', type: 'VARCHAR' }, { name: 'Time', type: 'VARCHAR' }, { name: 'Pid', type: 'BIGINT' }]);
    got.records.forEach((r: Json, i: number) => {
      expect(r.metadata.Time).toBe(hdfs[i].Time);
      expect(r.metadata.Date).toBe(hdfs[i].Date);
      expect(r.metadata.LineId).toBe(i + 1);
    });
    // both kinds of value were there: some Times have a leading zero, some do not
    expect(hdfs.some((r) => r.Time.startsWith('0'))).toBe(true);
    expect(hdfs.some((r) => !r.Time.startsWith('0'))).toBe(true);
    const time = (await fields('hdfs')).find((f) => f.field_path === 'Time');
    expect(time).toMatchObject({ type: 'str', seen_count: 2000 });
    expect(time.variants.map((v: Json) => v.physical_field)).toEqual(['Time']);
    const records = (await search({ datasets: ['hdfs'], q: 'Time:"035530" OR Time:203615' })).records;
    expect(records.every((r: Json) => typeof r.metadata.Time === 'string')).toBe(true);
  });

  for (const path of LOGHUB) {
    const name = basename(path, '_2k.log_structured.csv');
    it(`${name}: no column shows both an __i64 and a __str variant, in fields or SQL`, async () => {
      const dataset = `lh-${name.toLowerCase()}`;
      await ingest(dataset, readFileSync(path, 'utf8'), 'format=csv');
      const listed = await fields(dataset);
      expect(listed.length).toBeGreaterThan(3);
      for (const f of listed) {
        const types = f.variants.map((v: Json) => v.value_type);
        expect(types.includes('i64') && types.includes('str'), `${f.field_path}: ${types}`).toBe(false);
        expect(f.variants.length, f.field_path).toBeGreaterThanOrEqual(1);
      }
      const columns: string[] = (await sql(`DESCRIBE "${dataset}"`)).records.map((r: Json) => String(r.metadata.column_name));
      for (const c of columns) if (c.endsWith('__i64')) expect(columns, c).not.toContain(`${c.slice(0, -5)}__str`);
      expect(columns.filter((c) => /__(i64|str)$/.test(c))).toEqual([]);
      // every cell reads back as the CSV wrote it
      const rows = csvRows(path);
      const cols = Object.keys(rows[0]).filter((c) => c !== 'Content');
      const got = (await sql(`SELECT ${cols.map((c) => `"${c}"`).join(', ')} FROM "${dataset}" ORDER BY LineId`)).records;
      expect(got).toHaveLength(rows.length);
      got.forEach((r: Json, i: number) => {
        for (const c of cols) expect(String(r.metadata[c] ?? ''), `${name} row ${i + 1} ${c}`).toBe(rows[i][c]);
      });
    });
  }
});

describe('a search naming a field no dataset has warns', () => {
  it('in where, q, collapse and aggregations, with the closest known names', async () => {
    const got = await search({
      datasets: ['hdfs'],
      where: [{ field: 'level', op: 'eq', value: 'INFO' }],
      q: 'componet:x OR Level:INFO',
      collapse: { field: 'evntid' },
      aggregations: [{ name: 'pids', type: 'terms', field: 'PID' }, { name: 'ok', type: 'terms', field: 'Component' }],
    });
    const byField = Object.fromEntries(got.warnings.map((w: Json) => [w.field, w]));
    expect(Object.keys(byField).sort()).toEqual(['PID', 'componet', 'evntid', 'level']);
    expect(byField.level).toMatchObject({ code: 'unknown_field', suggestions: ['Level'], message: expect.stringContaining("'Level'") });
    expect(byField.componet.suggestions[0]).toBe('Component');
    expect(byField.evntid.suggestions[0]).toBe('EventId');
    expect(byField.PID.suggestions[0]).toBe('Pid');
    expect(byField.level.message).toContain('where');
    expect(byField.componet.message).toContain('q');
    expect(byField.evntid.message).toContain('collapse');
    expect(byField.PID.message).toContain("aggregation 'pids'");
  });

  it('stays on every page, and is not given for known names, system names or paths inside a known field', async () => {
    const first = await search({ datasets: ['hdfs'], limit: 5, where: [{ field: 'lvl', op: 'exists' }, { field: 'Level', op: 'exists' }] });
    expect(first.warnings.map((w: Json) => w.field)).toEqual(['lvl']);
    expect(first.total.value).toBe(0);
    const none = await search({ datasets: ['hdfs'], limit: 5, where: [{ field: 'Level', op: 'eq', value: 'INFO' }, { field: 'metadata.Pid', op: 'exists' }], q: 'body:block AND time:* OR id:x OR title:y' });
    expect(none.warnings).toBeUndefined();
    const all = await search({ datasets: ['hdfs'], limit: 5, where: [{ field: 'nothere', op: 'ne', value: 'x' }] });
    expect(all.warnings).toHaveLength(1);
    const next = await search({ cursor: all.next_cursor });
    expect(next.warnings).toEqual(all.warnings);
  });
});

describe('GET /v1/admin/fields', () => {
  it('gives every field at least one variant, in the spec\'s shape', async () => {
    const listed = await fields('hdfs');
    expect(listed.length).toBeGreaterThan(5);
    for (const f of listed) {
      expect(f.variants.length, f.field_path).toBeGreaterThanOrEqual(1);
      for (const v of f.variants) {
        expect(v).toEqual({
          dataset_id: 'hdfs', tenant_id: f.tenant_id, field_path: f.field_path, physical_field: expect.any(String), value_type: expect.any(String),
          sample_value: expect.any(String), indexed: expect.any(Boolean), stored: true, fast: expect.any(Boolean), seen_count: expect.any(Number),
        });
      }
      expect(f.variants.reduce((n: number, v: Json) => n + v.seen_count, 0)).toBe(f.seen_count);
    }
    expect(listed.find((f) => f.field_path === 'LineId').variants).toEqual([expect.objectContaining({ physical_field: 'LineId', value_type: 'i64', sample_value: '1', fast: true })]);
  });
});
