/**
 * Reindex jobs over HTTP: a changed transform takes effect on old records, searches keep answering
 * while a new generation is built, and a cancelled reindex leaves the old generation serving.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DerivedIndexes } from '../src/engine/derived/derivedIndexes.js';
import { layout } from '../src/engine/layout.js';
import { useApp } from './helpers/app.js';
import { DATA } from './helpers/cli.js';
import { expectStatus, until, type Json } from './helpers/http.js';

const HDFS = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
/** HDFS lines as records; `tag` is a word no line holds, kept in metadata until a transform makes it the title */
const rows = (from: number, n: number) => HDFS.slice(from, from + n).map(([line, , , , level, component, content]) => ({ id: `hdfs-${line}`, body: content, level, component, tag: `zqxtag${Number(line) % 7}` }));
const ndjson = (r: object[]) => r.map((x) => JSON.stringify(x)).join('\n') + '\n';

const { t, http } = useApp();
const derived = () => (t.engine as unknown as { derived: DerivedIndexes }).derived;

const waitRun = (id: string) =>
  until(`run ${id}`, async () => {
    const run = expectStatus(await http.get(`/v1/ingest/runs/${id}`), 200);
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });
const ended = (jobId: string) =>
  until(`reindex ${jobId}`, async () => {
    const job = expectStatus(await http.get(`/v1/admin/reindex/jobs/${jobId}`), 200);
    return ['succeeded', 'failed', 'cancelled'].includes(job.status) ? job : undefined;
  }, 60_000);
const stream = async (d: string, r: object[]) => waitRun(expectStatus(await http.call('POST', `/v1/ingest/sources/${d}/stream?format=ndjson`, { body: ndjson(r) }), 202).ingest_run_id);
const hits = async (d: string, q: string) => expectStatus(await http.post('/v1/search', { datasets: [d], q, limit: 1 }), 200).total.value;
const sql = async (statement: string) => expectStatus(await http.post('/v1/sql', { sql: statement }), 200).records[0].metadata;

/** Replaces the dataset's default source with the same one but this transform (PUT replaces a source whole). */
async function changeTransform(d: string, transform_config: object): Promise<void> {
  const [source] = expectStatus(await http.get(`/v1/admin/sources?dataset_id=${d}`), 200).sources;
  const { dataset_id, name, source_key, source_type, parse_config, search_config, semantic_config } = source;
  expectStatus(await http.put(`/v1/admin/hosted-sources/${source.source_id}`, { dataset_id, name, source_key, source_type, parse_config, search_config, semantic_config, transform_config }), 200);
}

describe('reindex jobs', () => {
  it('takes a changed transform_config into the records already ingested, and into every index', async () => {
    const d = 'tx';
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: d }), 201);
    await stream(d, rows(0, 300));
    await stream(d, rows(300, 200));
    expect(await hits(d, 'zqxtag3')).toBe(0); // the tag is metadata: text search does not see it
    await changeTransform(d, { title_field: 'tag' });

    const job = expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: d }), 202);
    expect(job).toMatchObject({ dataset_id: d, indexes: ['text', 'vector', 'sql'], target_generation_id: null });
    const done = await ended(job.job_id);
    expect(done).toMatchObject({ status: 'succeeded', phase: 'done', object_count: 2, object_status_counts: { done: 2 }, source_document_count: 500, error_message: null });
    expect(done.target_generation_id).toBeGreaterThan(Math.max(...done.source_generation_ids));
    expect(done.target_index_id).toBe(`${d}@${done.target_generation_id}`);
    expect(done.promotion_id).toMatch(/^prom_/);
    expect(Date.parse(done.manifest_cutoff_at)).toBeLessThanOrEqual(Date.parse(done.completed_at));

    const expected = rows(0, 500).filter((r) => r.tag === 'zqxtag3').length;
    expect(await hits(d, 'zqxtag3')).toBe(expected);
    expect(await sql(`SELECT count(*) AS n, count(DISTINCT _id) AS ids, count(*) FILTER (WHERE _title = 'zqxtag3') AS tagged FROM ${d}`)).toEqual({ n: 500, ids: 500, tagged: expected });
    const reparsed = expectStatus(await http.get(`/v1/ingest/runs?dataset_id=${d}`), 200).runs.filter((r: Json) => r.reindex_job_id === job.job_id);
    expect(reparsed).toHaveLength(2);
    expect(reparsed.every((r: Json) => r.status === 'ready' && r.input_kind === 'reindex')).toBe(true);
    // the text index serves its new generation, and the old one's files are gone
    const g = done.target_generation_id;
    expect(existsSync(layout.textSnapshot(t.engine.dataDir, t.admin.tenant_id, d, g))).toBe(true);
    for (const old of done.source_generation_ids) if (old !== g) expect(existsSync(layout.textSnapshot(t.engine.dataDir, t.admin.tenant_id, d, old))).toBe(false);
  });

  it('a changed id_field moves ids between objects without losing one', async () => {
    const d = 'ids';
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: d }), 201);
    await stream(d, [{ id: 'a1', uid: '7', body: 'first object' }]);
    await stream(d, [{ id: '7', uid: '9', body: 'second object' }]);
    await changeTransform(d, { id_field: 'uid' });
    expect(await ended(expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: d }), 202).job_id)).toMatchObject({ status: 'succeeded' });
    const rows = expectStatus(await http.post('/v1/sql', { sql: `SELECT _id, _body FROM ${d} ORDER BY _id` }), 200).records.map((r: Json) => r.metadata);
    expect(rows).toEqual([{ _id: '7', _body: 'first object' }, { _id: '9', _body: 'second object' }]);
  });

  it('a reindex with nothing changed parses nothing again and rebuilds only the indexes asked for', async () => {
    const done = await ended(expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'tx', indexes: ['text'] }), 202).job_id);
    expect(done).toMatchObject({ status: 'succeeded', indexes: ['text'], object_status_counts: { done: 2 }, source_generation_ids: [expect.any(Number)] });
    expect(await hits('tx', 'zqxtag3')).toBeGreaterThan(0);
  });

  it('answers every search while it rebuilds, with no gap', async () => {
    const d = 'load';
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: d }), 201);
    for (let i = 0; i < 3; i++) await stream(d, rows(0, 2000).map((r) => ({ ...r, id: `${r.id}-${i}` })));
    const before = await hits(d, 'PacketResponder');
    expect(before).toBeGreaterThan(0);
    const job = expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: d }), 202);
    const seen: number[] = [];
    let status = '';
    while (!['succeeded', 'failed', 'cancelled'].includes(status)) {
      const res = await http.post('/v1/search', { datasets: [d], q: 'PacketResponder', limit: 1 });
      seen.push(expectStatus(res, 200).total.value);
      status = expectStatus(await http.get(`/v1/admin/reindex/jobs/${job.job_id}`), 200).status;
    }
    expect(status).toBe('succeeded');
    expect(seen.length).toBeGreaterThan(3);
    expect(new Set(seen)).toEqual(new Set([before]));
    expect(await hits(d, 'PacketResponder')).toBe(before);
  }, 120_000);

  it('cancelled mid-rebuild, it leaves the old generation serving and removes the partial one', async () => {
    const sqlIndex = derived().get('sql');
    const build = sqlIndex.build.bind(sqlIndex);
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    let filling!: () => void;
    const started = new Promise<void>((ok) => (filling = ok));
    // the SQL build waits, once filled, until the test has asked for the cancel
    sqlIndex.build = async (...args) => {
      const b = await build(...args);
      return { ...b, fill: async (upto) => { const n = await b.fill(upto); filling(); await held; return n; } };
    };
    try {
      const before = { text: derived().get('text').generation(t.admin.tenant_id, 'tx'), sql: sqlIndex.generation(t.admin.tenant_id, 'tx') };
      const job = expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'tx' }), 202);
      await started;
      expect(expectStatus(await http.get(`/v1/admin/reindex/jobs/${job.job_id}`), 200).phase).toBe('rebuild');
      expectStatus(await http.post(`/v1/admin/reindex/jobs/${job.job_id}/cancel`), 200);
      expect(await hits('tx', 'zqxtag3')).toBeGreaterThan(0); // still served meanwhile
      release();
      const done = await ended(job.job_id);
      expect(done.status).toBe('cancelled');
      expect({ text: derived().get('text').generation(t.admin.tenant_id, 'tx'), sql: sqlIndex.generation(t.admin.tenant_id, 'tx') }).toEqual(before);
      expect(existsSync(layout.textSnapshot(t.engine.dataDir, t.admin.tenant_id, 'tx', done.target_generation_id))).toBe(false);
      const db = await t.engine.sql.indexes.tenant(t.admin.tenant_id);
      expect(db.pending.has('tx')).toBe(false);
      const conn = await db.connect();
      const left = (await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM duckdb_tables() WHERE table_name = 'tx@${done.target_generation_id}'`)).getRowObjectsJS();
      conn.closeSync();
      expect(left).toEqual([{ n: 0 }]);
      expect(await hits('tx', 'zqxtag3')).toBeGreaterThan(0);
      expect(expectStatus(await http.post(`/v1/admin/reindex/jobs/${job.job_id}/cancel`), 409).detail).toMatch(/already ended/);
    } finally {
      sqlIndex.build = build;
      release();
    }
  });

  it('refuses what it cannot do: a member, an unknown dataset, a foreign source, a bad index name, a second reindex at once', async () => {
    expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'nope' }), 404);
    expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'tx', indexes: ['bm25'] }), 422);
    expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'tx', indexes: [] }), 422);
    const [other] = expectStatus(await http.get('/v1/admin/sources?dataset_id=load'), 200).sources;
    expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'tx', source_id: other.source_id }), 404);
    expectStatus(await http.get('/v1/admin/reindex/jobs/job_nope'), 404);
  });
});
