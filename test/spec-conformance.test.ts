import { describe, expect, it, beforeAll } from 'vitest';
import { useApp } from './helpers/app.js';
import { until } from './helpers/http.js';
import type { Store } from '../src/engine/store/db.js';

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('spec conformance', () => {
  const { t, http } = useApp();
  const waitRun = (id: string) => until(`run ${id}`, async () => {
    const run = (await http.get(`/v1/ingest/runs/${id}`)).body;
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });

  const waitRunAs = (id: string, as: { token: string; tenant: string }) => until(`run ${id}`, async () => {
    const run = (await http.get(`/v1/ingest/runs/${id}`, as)).body;
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });

  beforeAll(async () => {
    expect((await http.post('/v1/admin/datasets', { dataset_id: 'logs' })).status).toBe(201);
  });

  it('a stream with the ingest token stamps the source ingest_token_last_used_at', async () => {
    const put = await http.put('/v1/admin/hosted-sources/40', { dataset_id: 'logs', name: 'tokened', source_key: 'tokened', source_type: 'hosted' });
    expect(put.status).toBe(200);
    const minted = (await http.post('/v1/admin/sources/40/ingest-token')).body;
    expect((await http.get('/v1/admin/sources/40')).body.ingest_token_last_used_at).toBeNull();
    const res = await http.call('POST', '/v1/ingest/sources/tokened/stream', { body: ndjson([{ msg: 'hello' }]), token: minted.token, tenant: null });
    expect(res.status).toBe(202);
    const used = await until('ingest_token_last_used_at', async () => {
      const source = (await http.get('/v1/admin/sources/40')).body;
      return source.ingest_token_last_used_at ? source : undefined;
    });
    expect(used.ingest_token_last_used_at).toMatch(ISO);
    expect(Date.parse(used.ingest_token_last_used_at)).toBeGreaterThanOrEqual(Date.parse(minted.created_at));
    // a rotation starts the new token unused
    await http.post('/v1/admin/sources/40/ingest-token');
    expect((await http.get('/v1/admin/sources/40')).body.ingest_token_last_used_at).toBeNull();
  });

  it('format jsonl is a synonym of ndjson on the stream endpoint and on upload sessions, echoed as given', async () => {
    const put = await http.put('/v1/admin/hosted-sources/41', { dataset_id: 'logs', name: 'jl', source_key: 'jl', source_type: 'hosted', parse_config: { format: 'jsonl' } });
    expect(put.status).toBe(200);
    expect(put.body.format).toBe('jsonl');
    const res = await http.call('POST', '/v1/ingest/sources/jl/stream?format=jsonl', { body: ndjson([{ msg: 'one jsonl' }, { msg: 'two jsonl' }]) });
    expect(res.status).toBe(202);
    expect(res.body.format).toBe('jsonl');
    const run = await waitRun(res.body.ingest_run_id);
    expect(run.status).toBe('ready');
    expect(run.format).toBe('jsonl');
    expect(run.documents.parsed).toBe(2);
    const plain = await http.call('POST', '/v1/ingest/sources/jl/stream?format=ndjson', { body: ndjson([{ msg: 'three' }]) });
    expect(plain.body.format).toBe('ndjson');
    const session = await http.post('/v1/ingest/sources/jl/uploads', { filename: 'events.txt', format: 'jsonl' });
    expect(session.status).toBe(201);
    expect((await http.call('POST', '/v1/ingest/sources/jl/stream?format=yaml', { body: '{}\n' })).status).toBe(422);
  });

  it('format jsonl exports as ndjson does, into a .jsonl file, and says jsonl', async () => {
    const created = await http.post('/v1/export', { search_request: { datasets: ['logs'], q: 'msg:jsonl' }, format: 'jsonl' });
    expect(created.status).toBe(202);
    expect(created.body.format).toBe('jsonl');
    const done = await until('export', async () => {
      const e = (await http.get(`/v1/export/${created.body.export_id}`)).body;
      return e.status === 'completed' || e.status === 'failed' ? e : undefined;
    });
    expect(done).toMatchObject({ status: 'completed', format: 'jsonl', row_count: 2 });
    expect(done.store_key).toMatch(/\.jsonl$/);
    const file = await http.get(done.download_url, { token: null, tenant: null });
    const lines = file.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const text of ['one jsonl', 'two jsonl']) expect(file.text).toContain(text);
  });

  it('DELETE /v1/platform/tenants/{id} answers 202 with a pending job that succeeds in the background; the tenant and its data are gone', async () => {
    const plat = (await http.post('/v1/admin/platform-keys', { name: 'conformance-platform' })).body.token as string;
    const tenant = (await http.post('/v1/platform/tenants', { name: 'doomed' }, { token: plat, tenant: null })).body.tenant_id as string;
    const inside = { token: plat, tenant };
    expect((await http.post('/v1/admin/datasets', { dataset_id: 'd' }, inside)).status).toBe(201);
    const run = await http.call('POST', '/v1/ingest/sources/d/stream?format=ndjson', { ...inside, body: ndjson([{ msg: 'a' }, { msg: 'b' }]) });
    expect((await waitRunAs(run.body.ingest_run_id, inside)).status).toBe('ready');
    const accepted = await http.del(`/v1/platform/tenants/${tenant}`, { token: plat, tenant: null });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ scope: 'tenant', status: 'pending', completed_at: null, item_pending_count: 1 });
    const own = { token: plat, tenant: accepted.body.tenant_id };
    const job = await until('tenant deletion', async () => {
      const polled = await http.get(`/v1/admin/data-deletion-jobs/${accepted.body.job_id}`, own);
      expect(polled.status).toBe(200);
      return polled.body.status === 'succeeded' ? polled.body : undefined;
    });
    expect(job.items[0]).toMatchObject({ status: 'succeeded', result: { deleted_documents: 2 } });
    expect([403, 404]).toContain((await http.get('/v1/datasets', inside)).status);
    expect((await http.get('/v1/platform/tenants', { token: plat, tenant: null })).body.tenants.map((x: { tenant_id: string }) => x.tenant_id)).not.toContain(tenant);
    expect((t.engine as unknown as { store: Store }).store.records.getKeysCount({ start: [tenant], end: [tenant, '\uffff'] })).toBe(0);
    expect((t.engine as unknown as { store: Store }).store.meta.getKeysCount({ start: [tenant], end: [tenant, '\uffff'] })).toBe(0);
  });

  describe('dataset_scope and content_filter', () => {
    const png = () => {
      const b = Buffer.alloc(33);
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
      b.writeUInt32BE(13, 8);
      b.write('IHDR', 12, 'latin1');
      b.writeUInt32BE(4, 16);
      b.writeUInt32BE(3, 20);
      return b;
    };
    const search = (body: object) => http.post('/v1/search', { limit: 50, ...body });
    const ids = (res: { body: { records: { provenance: { dataset_id: string } ; metadata: Record<string, unknown> }[] } }) => res.body.records;

    beforeAll(async () => {
      for (const d of ['scope-a', 'scope-b']) expect((await http.post('/v1/admin/datasets', { dataset_id: d })).status).toBe(201);
      for (const [d, body, type, name] of [['scope-a', ndjson([{ msg: 'zebra text one' }, { msg: 'zebra text two' }]), 'application/x-ndjson', 'a.ndjson'], ['scope-b', ndjson([{ msg: 'zebra in b' }]), 'application/x-ndjson', 'b.ndjson'], ['scope-a', png(), 'image/png', 'zebra.png']] as const) {
        const res = await http.call('POST', `/v1/ingest/sources/${d}/stream?filename=${name}`, { body, contentType: type });
        expect(res.status, res.text).toBe(202);
        expect((await waitRun(res.body.ingest_run_id)).status).toBe('ready');
      }
    });

    it('selected searches exactly the datasets named; all searches every dataset; each refuses the other shape with 422', async () => {
      const selected = await search({ datasets: ['scope-b'], dataset_scope: 'selected' });
      expect(selected.status).toBe(200);
      expect(new Set(ids(selected).map((r) => r.provenance.dataset_id))).toEqual(new Set(['scope-b']));
      const all = await search({ dataset_scope: 'all' });
      expect(all.status).toBe(200);
      expect([...new Set(ids(all).map((r) => r.provenance.dataset_id))]).toEqual(expect.arrayContaining(['scope-a', 'scope-b']));
      for (const body of [{ dataset_scope: 'selected' }, { dataset_scope: 'selected', datasets: [] }, { dataset_scope: 'all', datasets: ['scope-a'] }]) {
        const res = await search(body);
        expect(res.status, JSON.stringify(body)).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'datasets'], type: 'value_error', msg: expect.stringContaining('dataset_scope') });
      }
    });

    it('content_filter text leaves image records out, image keeps only them, null keeps both; other values get 422', async () => {
      const both = await search({ datasets: ['scope-a'], content_filter: null });
      expect(ids(both)).toHaveLength(3);
      const text = await search({ datasets: ['scope-a'], content_filter: 'text' });
      expect(text.status).toBe(200);
      expect(ids(text)).toHaveLength(2);
      expect(text.body.total.value).toBe(2);
      expect(ids(text).every((r) => r.metadata.content_type === undefined)).toBe(true);
      const image = await search({ datasets: ['scope-a'], content_filter: 'image', text: 'zebra' });
      expect(ids(image)).toHaveLength(1);
      expect(ids(image)[0].metadata.content_type).toBe('image/png');
      const bad = await search({ content_filter: 'video' });
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(['body', 'content_filter']);
    });
  });

  describe('422 issues: one per problem', () => {
    it('an enum mismatch is one issue listing the allowed values', async () => {
      const res = await http.post('/v1/admin/api-keys', { name: 'k', role: 'owner' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ['body', 'role'], msg: "Input should be 'Admin', 'Member', 'admin' or 'member'", type: 'enum', ctx: { expected: "'Admin', 'Member', 'admin' or 'member'" }, input: 'owner' },
      ]);
    });

    it('a nullable enum lists its values and null; a nullable string too long says it is too long', async () => {
      const bad = await http.post('/v1/search', { content_filter: 'video' });
      expect(bad.body.detail).toEqual([
        { loc: ['body', 'content_filter'], msg: "Input should be 'text', 'image' or null", type: 'enum', ctx: { expected: "'text', 'image' or null" }, input: 'video' },
      ]);
      const long = await http.post('/v1/search', { q: 'x'.repeat(100_000) });
      expect(long.status).toBe(422);
      expect(long.body.detail).toHaveLength(1);
      expect(long.body.detail[0]).toMatchObject({ loc: ['body', 'q'], type: 'maxLength' });
      const wrongType = await http.post('/v1/search', { q: 5 });
      expect(wrongType.body.detail).toEqual([
        { loc: ['body', 'q'], msg: 'Input should be a valid string or null', type: 'type', ctx: { expected: 'a valid string or null' }, input: 5 },
      ]);
    });

    it('two problems are two issues, each at its own place', async () => {
      const res = await http.post('/v1/search', { content_filter: 'video', dataset_scope: 'some', limit: 0 });
      expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(expect.arrayContaining([['body', 'content_filter'], ['body', 'dataset_scope'], ['body', 'limit']]));
      expect(res.body.detail).toHaveLength(3);
    });
  });
});
