/**
 * The narrow data-deletion scopes (one completed upload, one object of a source, one record) over
 * HTTP and `svc delete records`: each takes exactly its records out of text search, SQL and
 * vectors; unknown or foreign targets are 404, members 403; only a deletion that has not started
 * can be cancelled.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DerivedIndexes } from '../src/engine/derived/derivedIndexes.js';
import { useApp } from './helpers/app.js';
import { DATA, init, svc, tempDir } from './helpers/cli.js';
import { expectStatus, until, type Json } from './helpers/http.js';

/** HDFS log lines, each tagged with the word of the object it goes into. */
const HDFS = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log_structured.csv'), 'utf8').split('\n').slice(1, 41).map((l) => l.split(','));
const rows = (marker: string, from: number, n: number) =>
  HDFS.slice(from, from + n).map(([line, , , , level, , content]) => ({ id: `${marker}-${line}`, body: `${marker} ${content}`, level }));
const ndjson = (r: object[]) => r.map((x) => JSON.stringify(x)).join('\n') + '\n';

const { t, http } = useApp();
const D = 'hdfs';

const waitRun = (id: string) =>
  until(`run ${id}`, async () => {
    const run = expectStatus(await http.get(`/v1/ingest/runs/${id}`), 200);
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });
const ended = (jobId: string) =>
  until(`deletion ${jobId}`, async () => {
    const job = expectStatus(await http.get(`/v1/admin/data-deletion-jobs/${jobId}`), 200);
    return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
  });
/** records of the dataset whose text holds `word`, by the text index */
const textCount = async (word: string) => expectStatus(await http.post('/v1/search', { datasets: [D], q: word, limit: 1 }), 200).total.value;
const sqlCount = async (where = 'true') => expectStatus(await http.post('/v1/sql', { sql: `SELECT count(*) AS n FROM ${D} WHERE ${where}` }), 200).records[0].metadata.n;
const vectors = () => {
  const idx = t.engine.semantic.indexes;
  return idx.get(t.admin.tenant_id, D, idx.space(t.admin.tenant_id, D)!).size;
};
/** every count a scope may change, so that a test sees what changed and what did not */
const counts = async () => ({
  alpha: await textCount('alpha'), upsilon: await textCount('upsilon'), gamma: await textCount('gamma'),
  sql: await sqlCount(), vectors: vectors(),
});

async function stream(r: object[]): Promise<Json> {
  const res = expectStatus(await http.call('POST', `/v1/ingest/sources/${D}/stream?format=ndjson&id_field=id`, { body: ndjson(r) }), 202);
  return waitRun(res.ingest_run_id);
}

async function upload(r: object[]): Promise<Json> {
  const base = `/v1/ingest/sources/${D}/uploads`;
  const s = expectStatus(await http.post(base, { filename: 'hdfs.ndjson', format: 'ndjson', id_field: 'id' }), 201);
  const [part] = expectStatus(await http.post(`${base}/parts`, { upload_session_id: s.upload_session_id, part_numbers: [1] }), 200).parts;
  const put = expectStatus(await http.call('PUT', part.upload_url, { body: Buffer.from(ndjson(r)), token: null, tenant: null }), 200);
  const done = expectStatus(await http.post(`${base}/complete`, { upload_session_id: s.upload_session_id, parts: [{ part_number: 1, etag: put.etag }] }), 200);
  await waitRun(done.ingest_run_id);
  return done;
}

describe('data-deletion scopes', () => {
  let alphaRun: Json;
  let uploaded: Json;

  it('sets up a dataset with vectors from three objects', async () => {
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: D }), 201);
    alphaRun = await stream(rows('alpha', 0, 10));
    uploaded = await upload(rows('upsilon', 10, 10));
    await stream(rows('gamma', 20, 20));
    // a semantic search runs the embedding this process defers, so that every record has its vector
    expectStatus(await http.post('/v1/search', { datasets: [D], text: 'block terminating', mode: 'semantic' }), 200);
    expect(await until('indexed', async () => ((await sqlCount()) === 40 ? counts() : undefined))).toEqual({ alpha: 10, upsilon: 10, gamma: 20, sql: 40, vectors: 40 });
  });

  it('deletes one record from text, SQL and vectors, and nothing else', async () => {
    const res = await http.del(`/v1/admin/datasets/${D}/records/gamma-21`);
    const job = expectStatus(res, 202);
    expect(job).toMatchObject({ scope: 'record', target_dataset_id: D, target_source_id: null, target_upload_session_id: null, item_total_count: 1 });
    const done = await ended(job.job_id);
    expect(done).toMatchObject({ status: 'succeeded', item_succeeded_count: 1 });
    expect(done.items[0]).toMatchObject({ item_type: 'record', target: { dataset_id: D, record_id: 'gamma-21' }, result: { deleted_documents: 1 } });
    expect(await counts()).toEqual({ alpha: 10, upsilon: 10, gamma: 19, sql: 39, vectors: 39 });
    expect(await sqlCount("_id = 'gamma-21'")).toBe(0);
    const semantic = expectStatus(await http.post('/v1/search', { datasets: [D], text: 'gamma PacketResponder block terminating', mode: 'semantic', limit: 100 }), 200);
    expect(semantic.records.map((r: Json) => r.id)).not.toContain('gamma-21');
    expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-21`), 404);
  });

  it('deletes one object of a source with its records and its run', async () => {
    const job = expectStatus(await http.del(`/v1/admin/objects?source_id=${alphaRun.source_id}&key=${encodeURIComponent(alphaRun.key)}`), 202);
    expect(job).toMatchObject({ scope: 'object', target_source_id: alphaRun.source_id, target_upload_session_id: null, item_total_count: 1 });
    const done = await ended(job.job_id);
    expect(done.items[0]).toMatchObject({ item_type: 'object_document', target: { key: alphaRun.key }, result: { deleted_documents: 10 } });
    expect(await counts()).toEqual({ alpha: 0, upsilon: 10, gamma: 19, sql: 29, vectors: 29 });
    expectStatus(await http.get(`/v1/ingest/runs/${alphaRun.ingest_run_id}`), 404);
    const again = expectStatus(await http.del(`/v1/admin/objects?source_id=${alphaRun.source_id}&key=${encodeURIComponent(alphaRun.key)}`), 404);
    expect(again.detail).toMatch(/object '.*' of source \d+ not found/);
  });

  it('deletes a completed upload with its object and records; the session is gone after', async () => {
    const job = expectStatus(await http.del(`/v1/admin/uploads/${uploaded.upload_session_id}`), 202);
    expect(job).toMatchObject({ scope: 'hosted_upload', target_upload_session_id: uploaded.upload_session_id, target_source_id: uploaded.source_id });
    const done = await ended(job.job_id);
    expect(done.items[0].result.deleted_documents).toBe(10);
    expect(await counts()).toEqual({ alpha: 0, upsilon: 0, gamma: 19, sql: 19, vectors: 19 });
    expect((await http.get(`/v1/datasets/${D}`)).body.record_count).toBe(19);
    expect(expectStatus(await http.del(`/v1/admin/uploads/${uploaded.upload_session_id}`), 404).detail).toMatch(uploaded.upload_session_id);
  });

  it('answers 404 naming what is unknown, 404 for another tenant, 403 for a member', async () => {
    expect(expectStatus(await http.del(`/v1/admin/datasets/${D}/records/nope`), 404).detail).toMatch(/record 'nope' not found in dataset 'hdfs'/);
    expect(expectStatus(await http.del('/v1/admin/datasets/missing/records/x'), 404).detail).toMatch(/dataset 'missing'/);
    expect(expectStatus(await http.del('/v1/admin/uploads/upl_nope'), 404).detail).toMatch(/upload session 'upl_nope' not found/);
    expect(expectStatus(await http.del('/v1/admin/objects?source_id=999&key=x'), 404).detail).toMatch(/source/);
    expectStatus(await http.del('/v1/admin/objects?source_id=1'), 422); // no key

    const other = await t.engine.directory.createTenant('other', 'other-admin@example.test');
    const as = { token: await t.engine.sessions.issue(other.user.user_id, 3600), tenant: other.tenant.tenant_id };
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: D }, as), 201);
    expect(expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-22`, as), 404).detail).toMatch(/gamma-22/);
    expectStatus(await http.del(`/v1/admin/uploads/${uploaded.upload_session_id}`, as), 404);

    const member = expectStatus(await http.post('/v1/admin/members', { email: 'reader@example.test', role: 'member' }), 201);
    const reader = { token: await t.engine.sessions.issue(member.user_id, 3600) };
    expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-22`, reader), 403);
    expectStatus(await http.del(`/v1/admin/objects?source_id=1&key=x`, reader), 403);
    expectStatus(await http.del('/v1/admin/uploads/upl_nope', reader), 403);
    expect(await sqlCount()).toBe(19);
  });

  it('cancels a deletion that has not started, and refuses to cancel one that has (409)', async () => {
    // holds a deletion in the middle of its work: a listener of the store that waits for the test
    let release!: () => void;
    let hold: Promise<void> | null = new Promise((ok) => (release = ok));
    (t.engine as unknown as { derived: DerivedIndexes }).derived.onRemoved(async () => {
      if (hold) await hold;
    });
    const first = expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-22`), 202);
    await until('first running', async () => ((await http.get(`/v1/admin/data-deletion-jobs/${first.job_id}`)).body.status === 'running' ? true : undefined));
    // the same dataset's deletions go one at a time: these wait behind the held one
    const second = expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-23`), 202);
    const whole = expectStatus(await http.del(`/v1/admin/datasets/${D}`), 202);
    expect(expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-24`), 409).detail).toMatch(/being deleted/);

    const refused = expectStatus(await http.post(`/v1/admin/jobs/${first.job_id}/cancel`), 409);
    expect(refused.detail).toMatch(/has started and cannot be cancelled/);
    expect(expectStatus(await http.post(`/v1/admin/jobs/${second.job_id}/cancel`), 200).status).toBe('cancelled');
    expect(expectStatus(await http.post(`/v1/admin/jobs/${whole.job_id}/cancel`), 200).status).toBe('cancelled');
    hold = null;
    release();

    expect((await ended(first.job_id)).status).toBe('succeeded');
    expect(await ended(second.job_id)).toMatchObject({ status: 'failed', error_message: 'cancelled before it started', item_succeeded_count: 0 });
    // the cancelled dataset deletion gave the dataset back
    expect(await sqlCount("_id IN ('gamma-22', 'gamma-23')")).toBe(1);
    expect(await textCount('gamma')).toBe(18);
    expectStatus(await http.del(`/v1/admin/datasets/${D}/records/gamma-24`), 202);
  });
});

describe('svc delete records', () => {
  it('deletes records by id with --yes --wait and prints their jobs; an unknown id exits 3', () => {
    const dir = tempDir('svc-delete-');
    try {
      init(dir.path);
      const run = (args: string[], input?: string) => svc(args, { dataDir: dir.path, input });
      expect(run(['datasets', 'create', 'logs', '--no-semantic']).status).toBe(0);
      expect(run(['ingest', 'logs', '-', '--format', 'ndjson', '--wait'], ndjson(rows('delta', 0, 5))).status).toBe(0);
      const deleted = run(['delete', 'records', 'logs', 'delta-1', 'delta-3', '--yes', '--wait', '--output', 'json']);
      expect(deleted.status, deleted.stderr).toBe(0);
      const { jobs } = deleted.json();
      expect(jobs.map((j: Json) => [j.scope, j.status, j.items[0].result.deleted_documents])).toEqual([['record', 'succeeded', 1], ['record', 'succeeded', 1]]);
      const left = run(['sql', 'SELECT _id FROM logs ORDER BY _id', '--output', 'json']).json().records.map((r: Json) => r.metadata._id);
      expect(left).toEqual(['delta-2', 'delta-4', 'delta-5']);
      expect(run(['search', 'delta', '--dataset', 'logs', '--output', 'json']).json().total.value).toBe(3);
      expect(run(['delete', 'records', 'logs', 'delta-1']).status).toBe(2); // no terminal, no --yes: nothing deleted
      expect(run(['delete', 'records', 'logs', 'nope', '--yes']).status).toBe(3);
    } finally {
      dir.remove();
    }
  });
});
