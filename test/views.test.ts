/**
 * Views over HTTP, on a real data dir: materialized views (made from a request or from a search's
 * handle) keep their records' content and order until a deletion takes records out; live views run
 * their request again on each read. Records are lines of the shared OpenSSH_2k.log.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import type { Store } from '../src/engine/store/db.js';
import { buildApp } from '../src/server/app.js';
import { useApp } from './helpers/app.js';
import { DATA, init, tempDir } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const SSH = readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const rows = (prefix: string, from: number, n: number, edit = (line: string) => line) =>
  SSH.slice(from, from + n).map((line, i) => ({ id: `${prefix}-${from + i}`, msg: edit(line), n: from + i }));
const ndjson = (items: unknown[]) => items.map((r) => JSON.stringify(r)).join('\n') + '\n';

const { t, http } = useApp();

async function ingest(datasetId: string, items: unknown[], api = http): Promise<void> {
  const run = expectStatus(await api.call('POST', `/v1/ingest/sources/${datasetId}/stream?format=ndjson`, { body: ndjson(items), contentType: 'application/x-ndjson' }), 202);
  const done = await until(`run ${run.ingest_run_id}`, async () => {
    const r = expectStatus(await api.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(done.status, JSON.stringify(done)).toBe('ready');
}

async function dataset(datasetId: string, items: unknown[], api = http): Promise<void> {
  expectStatus(await api.post('/v1/admin/datasets', { dataset_id: datasetId, semantic: false }), 201);
  await ingest(datasetId, items, api);
}

const create = async (body: Json, api = http): Promise<Json> => expectStatus(await api.post('/v1/views', { name: 'v', ...body }), 201, 'create view');

/** Every page of a view's records, `limit` at a time. */
async function allRecords(viewId: string, limit: number): Promise<Json[]> {
  const out: Json[] = [];
  for (let cursor: string | null = null, pages = 0; ; pages++) {
    const page = expectStatus(await http.get(`/v1/views/${viewId}/records?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`), 200);
    expect(page.returned).toBe(page.records.length);
    out.push(...page.records);
    if (!page.next_cursor) return out;
    cursor = page.next_cursor;
    expect(pages).toBeLessThan(1000);
  }
}

/** Every page of a search. */
async function searchAll(req: Json): Promise<{ first: Json; records: Json[] }> {
  const first = expectStatus(await http.post('/v1/search', req), 200);
  const records = [...first.records];
  for (let cursor = first.next_cursor; cursor; ) {
    const page = expectStatus(await http.post('/v1/search', { ...req, cursor }), 200);
    records.push(...page.records);
    cursor = page.next_cursor;
  }
  return { first, records };
}

const store = () => (t.engine as unknown as { store: Store }).store;
const keys = (prefix: (string | number)[]) => store().meta.getKeysCount({ start: prefix, end: [...prefix, '\uffff'] });
const tenant = () => t.admin.tenant_id;

describe('materialized views', () => {
  it('made from a request, holds what the search answers, in its order', async () => {
    await dataset('ssh', rows('ssh', 0, 400));
    const req = { text: 'failed password', datasets: ['ssh'], limit: 50 };
    const search = await searchAll(req);
    const view = await create({ name: 'failed passwords', search_request: req });
    expect(view).toMatchObject({
      view_id: expect.stringMatching(/^view_[0-9a-z]{26}$/), name: 'failed passwords', kind: 'materialized', from_search_id: null,
      search_request: { ...req, cursor: null }, record_count: search.first.total.value, deleted_count: 0, total: { relation: 'eq', value: search.first.total.value }, expires_at: null,
    });
    expect(search.records.length).toBeGreaterThan(20);
    expect(await allRecords(view.view_id, 1000)).toEqual(search.records);
    expect(expectStatus(await http.get(`/v1/views/${view.view_id}`), 200)).toEqual(view);
  });

  it('made from a search_id, holds exactly what that search’s pages return', async () => {
    const req = { text: 'invalid user', datasets: ['ssh'], limit: 7 };
    const search = await searchAll(req);
    const view = await create({ from_search_id: search.first.search_id });
    expect(view).toMatchObject({ from_search_id: search.first.search_id, record_count: search.records.length, search_request: { text: 'invalid user', datasets: ['ssh'] } });
    expect(await allRecords(view.view_id, 13)).toEqual(search.records);
  });

  it('pages with a cursor return every record exactly once, in order', async () => {
    const view = await create({ search_request: { datasets: ['ssh'] } });
    expect(view.record_count).toBe(400);
    const whole = await allRecords(view.view_id, 1000);
    const paged = await allRecords(view.view_id, 37);
    expect(paged).toEqual(whole);
    expect(new Set(paged.map((r) => r.id)).size).toBe(400);
    const first = expectStatus(await http.get(`/v1/views/${view.view_id}/records`), 200);
    expect(first).toMatchObject({ view_id: view.view_id, kind: 'materialized', expires_at: null, returned: 20, total: { relation: 'eq', value: 400 } });
  });

  it('gives every record to a reader of the whole view (what an export writes), in order', async () => {
    const view = await create({ search_request: { datasets: ['ssh'] } });
    const caller = t.engine.localCaller(tenant());
    const batches = [];
    for await (const batch of t.engine.views.all(caller, view.view_id)) batches.push(batch);
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.flat().map((f) => f.record)).toEqual(await allRecords(view.view_id, 1000));
    expect(batches.flat().every((f) => f.dataset_id === 'ssh' && f.seq > 0)).toBe(true);
  });

  it('read after its records were replaced, answers their old content byte for byte', async () => {
    await dataset('replace', rows('rp', 400, 30));
    const view = await create({ search_request: { datasets: ['replace'] } });
    const before = await http.get(`/v1/views/${view.view_id}/records?limit=1000`);
    await ingest('replace', rows('rp', 400, 30, (line) => `${line.toUpperCase()} REPLACED`));
    const now = expectStatus(await http.post('/v1/search', { datasets: ['replace'], limit: 1000 }), 200);
    expect(now.records).toHaveLength(30);
    expect(now.records.every((r: Json) => r.body.endsWith('REPLACED'))).toBe(true);
    const after = await http.get(`/v1/views/${view.view_id}/records?limit=1000`);
    expect(after.status).toBe(200);
    expect(after.text).toBe(before.text);
    expect(after.body.records.some((r: Json) => r.body.includes('REPLACED'))).toBe(false);
    // a deletion still wins over the old copy: it shares the record's id
    const source = expectStatus(await http.get('/v1/datasets/replace'), 200).sources[0];
    await waitJob(expectStatus(await http.del(`/v1/admin/sources/${source}`), 202).job_id);
    const gone = expectStatus(await http.get(`/v1/views/${view.view_id}`), 200);
    expect(gone).toMatchObject({ record_count: 30, deleted_count: 30, total: { relation: 'eq', value: 0 } });
  });

  it('loses exactly the records a deletion job removes, and counts them', async () => {
    await dataset('keep', rows('keep', 500, 40));
    await dataset('by-source', rows('bs', 600, 25));
    await dataset('by-dataset', rows('bd', 700, 15));
    const view = await create({ search_request: { datasets: ['keep', 'by-source', 'by-dataset'] } });
    expect(view.record_count).toBe(80);
    const before = await allRecords(view.view_id, 1000);

    const source = expectStatus(await http.get('/v1/datasets/by-source'), 200).sources[0];
    await waitJob(expectStatus(await http.del(`/v1/admin/sources/${source}`), 202).job_id);
    expect(expectStatus(await http.get(`/v1/views/${view.view_id}`), 200)).toMatchObject({ record_count: 80, deleted_count: 25, total: { relation: 'eq', value: 55 } });
    expect(await allRecords(view.view_id, 1000)).toEqual(before.filter((r) => r.provenance.dataset_id !== 'by-source'));

    await waitJob(expectStatus(await http.del('/v1/admin/datasets/by-dataset'), 202).job_id);
    const after = expectStatus(await http.get(`/v1/views/${view.view_id}/records?limit=1000`), 200);
    expect(after.total).toEqual({ relation: 'eq', value: 40 });
    expect(after.records).toEqual(before.filter((r) => r.provenance.dataset_id === 'keep'));
    expect(expectStatus(await http.get(`/v1/views/${view.view_id}`), 200).deleted_count).toBe(40);
    for (const d of ['by-source', 'by-dataset']) expect(keys([tenant(), 'viewref', d])).toBe(0);
  });

  it('is refused with 422 naming the cap when the answer is larger, and leaves nothing behind', async () => {
    const counts = () => [keys([tenant(), 'view']), keys([tenant(), 'viewrec']), keys([tenant(), 'viewref'])];
    const before = counts();
    const cap = t.engine.config.search.maxAnswerRecords;
    t.engine.config.search.maxAnswerRecords = 150; // as SVC_VIEW_MAX_RECORDS=150 would
    try {
      for (const search_request of [{ datasets: ['ssh'] }, { text: 'sshd', datasets: ['ssh'] }]) {
        const res = await http.post('/v1/views', { name: 'too big', search_request });
        expect(res.status, res.text).toBe(422);
        expect(res.body.detail).toMatchObject({ code: 'too_many_records', message: expect.stringContaining('150') });
      }
    } finally {
      t.engine.config.search.maxAnswerRecords = cap;
    }
    expect(counts()).toEqual(before);
    expect(expectStatus(await http.get('/v1/views?limit=500'), 200).views.map((v: Json) => v.name)).not.toContain('too big');
  });

  it('DELETE answers the view as it was and removes it with every record it held', async () => {
    const view = await create({ search_request: { datasets: ['keep'] } });
    expect(keys([tenant(), 'viewrec', view.view_id])).toBe(40);
    expect(expectStatus(await http.del(`/v1/views/${view.view_id}`), 200)).toEqual(view);
    expect(expectStatus(await http.get(`/v1/views/${view.view_id}`), 404).detail).toBe(`view '${view.view_id}' not found`);
    expectStatus(await http.get(`/v1/views/${view.view_id}/records`), 404);
    expectStatus(await http.del(`/v1/views/${view.view_id}`), 404);
    expect(keys([tenant(), 'viewrec', view.view_id])).toBe(0);
    expect(keys([tenant(), 'view', view.view_id])).toBe(0);
    const refs = [...store().meta.getKeys({ start: [tenant(), 'viewref'], end: [tenant(), 'viewref', '\uffff'] })];
    expect(refs.filter((k) => (k as string[])[4] === view.view_id)).toEqual([]);
  });
});

async function waitJob(jobId: string): Promise<void> {
  const job = await until(`job ${jobId}`, async () => {
    const j = expectStatus(await http.get(`/v1/admin/data-deletion-jobs/${jobId}`), 200);
    return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
  });
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
}

describe('live views', () => {
  it('run their request again on each read, and page through one run', async () => {
    await dataset('live', rows('lv', 800, 10));
    const view = await create({ kind: 'live', search_request: { datasets: ['live'] } });
    expect(view).toMatchObject({ kind: 'live', record_count: 10, total: { relation: 'eq', value: 10 }, deleted_count: 0 });
    await ingest('live', rows('lv', 810, 5));
    const page = expectStatus(await http.get(`/v1/views/${view.view_id}/records?limit=4`), 200);
    expect(page).toMatchObject({ view_id: view.view_id, kind: 'live', returned: 4, total: { relation: 'eq', value: 15 } });
    const all = await allRecords(view.view_id, 4);
    expect(all.map((r) => r.id).sort()).toEqual(rows('lv', 800, 15).map((r) => r.id).sort());
  });

  it('made from a search_id, keep that search’s request and datasets', async () => {
    const search = expectStatus(await http.post('/v1/search', { text: 'invalid', datasets: ['live'] }), 200);
    const view = await create({ kind: 'live', from_search_id: search.search_id });
    expect(view).toMatchObject({ from_search_id: search.search_id, search_request: { text: 'invalid', datasets: ['live'] }, record_count: search.total.value });
  });

  it('refuse a cursor of another view or a bare search cursor with 422, and a bad request at creation', async () => {
    const a = await create({ kind: 'live', search_request: { datasets: ['live'] } });
    const b = await create({ kind: 'live', search_request: { datasets: ['live'] } });
    const cursor = expectStatus(await http.get(`/v1/views/${a.view_id}/records?limit=2`), 200).next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const foreign = await http.get(`/v1/views/${b.view_id}/records?cursor=${encodeURIComponent(cursor)}`);
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail[0]).toMatchObject({ loc: ['query', 'cursor'], msg: expect.stringContaining(a.view_id) });
    const search = expectStatus(await http.post('/v1/search', { datasets: ['live'], limit: 2 }), 200);
    expectStatus(await http.get(`/v1/views/${a.view_id}/records?cursor=${encodeURIComponent(search.next_cursor)}`), 422);
    const bad = await http.post('/v1/views', { name: 'bad', kind: 'live', search_request: { q: 'a AND (b' } });
    expect(bad.status, bad.text).toBe(422);
    expectStatus(await http.post('/v1/views', { name: 'bad', kind: 'live', search_request: { datasets: ['no-such'] } }), 404);
  });
});

describe('creating and reading views', () => {
  it('takes exactly one of from_search_id and search_request: both or neither is a 422 naming them', async () => {
    const search = expectStatus(await http.post('/v1/search', { text: 'sshd', datasets: ['ssh'] }), 200);
    const both = expectStatus(await http.post('/v1/views', { name: 'x', from_search_id: search.search_id, search_request: { text: 'sshd' } }), 422);
    expect(both.detail.map((d: Json) => d.loc)).toEqual([['body', 'from_search_id'], ['body', 'search_request']]);
    const neither = expectStatus(await http.post('/v1/views', { name: 'x' }), 422);
    expect(neither.detail.map((d: Json) => d.loc)).toEqual([['body', 'from_search_id'], ['body', 'search_request']]);
    expectStatus(await http.post('/v1/views', { name: 'x', search_request: { text: 'sshd' }, kind: 'frozen' }), 422);
  });

  it('answers 404 for a search_id that expired or is unknown', async () => {
    const res = expectStatus(await http.post('/v1/views', { name: 'x', from_search_id: 'srch_00000000000000000000000000' }), 404);
    expect(res.detail).toContain('expired or is unknown');
  });

  it('refuses an expires_at in the past', async () => {
    const res = expectStatus(await http.post('/v1/views', { name: 'x', search_request: { text: 'sshd' }, expires_at: '2020-01-01T00:00:00Z' }), 422);
    expect(res.detail[0].loc).toEqual(['body', 'expires_at']);
  });

  it('an expired view answers 404, and the retention sweep removes it with its records', async () => {
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const view = await create({ search_request: { datasets: ['keep'] }, expires_at: expiresAt });
    expect(view.expires_at).toBe(expiresAt);
    expectStatus(await http.get(`/v1/views/${view.view_id}/records`), 200);
    // as if its time had passed: the stored view's expiry set to a minute ago, rather than waiting for it
    const stateKey = [tenant(), 'view', view.view_id];
    await store().meta.put(stateKey, { ...store().meta.get(stateKey), expires_at: new Date(Date.now() - 60_000).toISOString() });
    expectStatus(await http.get(`/v1/views/${view.view_id}`), 404);
    expectStatus(await http.get(`/v1/views/${view.view_id}/records`), 404);
    expect(expectStatus(await http.get('/v1/views?limit=500'), 200).views.map((v: Json) => v.view_id)).not.toContain(view.view_id);
    expect(keys([tenant(), 'viewrec', view.view_id])).toBe(40);
    for (const sweep of t.engine.retention.sweeps) await sweep(Date.now());
    expect(keys([tenant(), 'viewrec', view.view_id])).toBe(0);
    expect(keys([tenant(), 'view', view.view_id])).toBe(0);
  });

  it('lists views newest first, with limit and cursor', async () => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await create({ name: `listed ${i}`, kind: 'live', search_request: { datasets: ['live'] } }));
    const first = expectStatus(await http.get('/v1/views?limit=2'), 200);
    expect(first.views.map((v: Json) => v.view_id)).toEqual([made[2].view_id, made[1].view_id]);
    expect(first.views[0]).toEqual(made[2]);
    const second = expectStatus(await http.get(`/v1/views?limit=2&cursor=${first.next_cursor}`), 200);
    expect(second.views[0].view_id).toBe(made[0].view_id);
    const all = expectStatus(await http.get('/v1/views?limit=500'), 200);
    expect(all.next_cursor).toBeNull();
    const ids = all.views.map((v: Json) => v.view_id);
    expect(ids).toEqual([...ids].sort().reverse());
    expectStatus(await http.get('/v1/views?cursor=nope'), 422);
  });

  it('a member reads views but may not create or delete one', async () => {
    const view = await create({ search_request: { datasets: ['keep'] } });
    const m = expectStatus(await http.post('/v1/admin/members', { email: 'viewer@example.test', role: 'member' }), 201);
    const member = client(() => t.url, { token: await t.engine.sessions.issue(m.user_id, 3600), tenant: tenant() });
    expectStatus(await member.post('/v1/views', { name: 'x', search_request: { text: 'sshd' } }), 403);
    expectStatus(await member.del(`/v1/views/${view.view_id}`), 403);
    expect(expectStatus(await member.get(`/v1/views/${view.view_id}`), 200)).toEqual(view);
    expectStatus(await member.get(`/v1/views/${view.view_id}/records`), 200);
    expectStatus(await member.get('/v1/views'), 200);
  });

  it('another tenant’s view is 404, as an unknown one', async () => {
    const view = await create({ search_request: { datasets: ['keep'] } });
    const b = await t.engine.directory.createTenant('bravo', 'bravo-admin@example.test');
    const other = client(() => t.url, { token: await t.engine.sessions.issue(b.user.user_id, 3600), tenant: b.tenant.tenant_id });
    for (const res of [await other.get(`/v1/views/${view.view_id}`), await other.get(`/v1/views/${view.view_id}/records`), await other.del(`/v1/views/${view.view_id}`)]) {
      expect(expectStatus(res, 404).detail).toBe(`view '${view.view_id}' not found`);
    }
    expect(expectStatus(await other.get('/v1/views'), 200).views).toEqual([]);
    expectStatus(await http.get(`/v1/views/${view.view_id}`), 200);
  });

  it('a tenant’s deletion removes its views and every record they held', async () => {
    const plat = expectStatus(await http.post('/v1/admin/platform-keys', { name: 'views-platform' }), 201).token;
    const p = expectStatus(await http.post('/v1/platform/tenants', { name: 'papa' }, { token: plat, tenant: null }), 201).tenant_id;
    const inP = client(() => t.url, { token: plat, tenant: p });
    await dataset('p-logs', rows('p', 900, 12), inP);
    const view = await create({ search_request: { datasets: ['p-logs'] } }, inP);
    expect(keys([p, 'viewrec', view.view_id])).toBe(12);
    expectStatus(await http.del(`/v1/platform/tenants/${p}`, { token: plat, tenant: null }), 202);
    for (const kind of ['view', 'viewrec', 'viewref']) await until(`${kind} gone`, () => (keys([p, kind]) === 0 ? true : undefined));
  });
});

describe('a view made on a full store', () => {
  it('answers 507 disk_full, is never listed, and is swept once the store has room', async () => {
    const dir = tempDir('svc-views-full-');
    const admin = init(dir.path);
    /** the app over `dir`, its store capped at `mapSize` bytes when given */
    const serve = async (mapSize?: number) => {
      const engine = await Engine.open(dir.path, { mapSize });
      const app = await buildApp(engine, { log: () => {} });
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const api = client(url, { token: admin.token, tenant: admin.tenant_id });
      const stored = (engine as unknown as { store: Store }).store;
      const close = async () => { await app.close(); await engine.close({ drain: false }); };
      return { engine, api, stored, close };
    };
    try {
      let s = await serve();
      await dataset('full', rows('full', 0, 2000), s.api);
      const { lastPageNumber, pageSize } = s.stored.env.getStats() as { lastPageNumber: number; pageSize: number };
      await s.close();
      // room for the view's first batch of records, not for the rest
      s = await serve((lastPageNumber + 1) * pageSize + 64 * 1024);
      const res = await s.api.post('/v1/views', { name: 'no room', search_request: { datasets: ['full'] } });
      expect(res.status, res.text).toBe(507);
      expect(res.body.detail).toMatchObject({ code: 'disk_full' });
      expect(expectStatus(await s.api.get('/v1/views'), 200).views).toEqual([]);
      await s.close();
      s = await serve();
      expect(s.stored.meta.getKeysCount({ start: [admin.tenant_id, 'view'], end: [admin.tenant_id, 'view', '\uffff'] })).toBe(1);
      for (const sweep of s.engine.retention.sweeps) await sweep(Date.now());
      for (const kind of ['view', 'viewrec', 'viewref']) expect(s.stored.meta.getKeysCount({ start: [admin.tenant_id, kind], end: [admin.tenant_id, kind, '\uffff'] })).toBe(0);
      await s.close();
    } finally {
      dir.remove();
    }
  });
});
