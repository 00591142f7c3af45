import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, tempDir, type Server } from './helpers/cli.js';
import { client, until, type Json } from './helpers/http.js';

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const SOURCE_FIELDS = [
  'source_id', 'source_key', 'source_type', 'tenant_id', 'dataset_id', 'name', 'enabled', 'connector_id', 'bucket', 'prefix',
  'access_role_ref', 'intake_role_ref', 'external_id_configured', 'retention_days', 'format', 'parse_config', 'transform_config',
  'search_config', 'semantic_config', 'ingest_token_configured', 'ingest_token_created_at', 'ingest_token_last_used_at',
  'ingest_token_revoked_at', 'created_at', 'updated_at',
];

describe('sources, ingest tokens and deletion jobs', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let api: ReturnType<typeof client>;
  let tenant = '';
  let token = '';

  const waitRun = (id: string) => until(`run ${id}`, async () => {
    const run = (await api.get(`/v1/ingest/runs/${id}`)).body;
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });
  const stream = (key: string, body: string, token?: string) =>
    api.call('POST', `/v1/ingest/sources/${key}/stream?format=ndjson`, { body, ...(token ? { token, tenant: null } : {}) });
  const total = async (q: string) => (await api.post('/v1/search', { datasets: ['web'], q, limit: 1 })).body.total.value;

  beforeAll(async () => {
    const who = init(dataDir);
    tenant = who.tenant_id;
    token = who.token;
    server = await serve(dataDir);
    api = client(server.url, { token: who.token, tenant });
    expect((await api.post('/v1/admin/datasets', { dataset_id: 'web' })).status).toBe(201);
  });
  afterAll(async () => {
    await server.stop();
    dir.remove();
  });

  it('PUT creates and replaces a hosted source with every field of the spec', async () => {
    const body = {
      dataset_id: 'web', name: 'Nginx', source_key: 'nginx', source_type: 'hosted', parse_config: { format: 'ndjson' },
      transform_config: { id_field: 'rid', body_field: 'line' }, retention_days: 30,
    };
    const created = await api.put('/v1/admin/hosted-sources/10', body);
    expect(created.status).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual([...SOURCE_FIELDS].sort());
    expect(created.body).toMatchObject({ source_id: 10, source_key: 'nginx', tenant_id: tenant, bucket: 'hosted', prefix: '', format: 'ndjson', enabled: true, ingest_token_configured: false });
    const again = await api.put('/v1/admin/hosted-sources/10', { ...body, name: 'Nginx access' });
    expect(again.body).toMatchObject({ source_id: 10, name: 'Nginx access', created_at: created.body.created_at });
    expect((await api.get('/v1/admin/sources/10')).body.name).toBe('Nginx access');
    const list = (await api.get('/v1/admin/sources?dataset_id=web')).body.sources.map((s: Json) => s.source_key);
    expect(list).toEqual(['web', 'nginx']);
  });

  it('rejects a source with a missing member, a wrong config shape, a taken key or an unknown dataset', async () => {
    const missing = await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'web', name: 'x', source_type: 'hosted' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'source_key'], type: 'missing' }));
    const shape = await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'web', name: 'x', source_key: 'x', source_type: 'hosted', transform_config: { id_field: 3 } });
    expect(shape.status).toBe(422);
    expect(shape.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'transform_config', 'id_field']);
    const timeFormat = await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'web', name: 'x', source_key: 'x', source_type: 'hosted', parse_config: { format: 'text', time_format: '%Y-%m-%d %q' } });
    expect(timeFormat.status).toBe(422);
    expect(timeFormat.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'parse_config', 'time_format'], msg: "time_format has an unknown directive '%q'" }));
    const timeName = await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'web', name: 'x', source_key: 'x', source_type: 'hosted', parse_config: { time_format: 'rfc5424' } });
    expect(timeName.status).toBe(422);
    expect((await api.get('/v1/admin/sources/11')).status).toBe(404);
    const external = await api.put('/v1/admin/sources/11', { dataset_id: 'web', name: 'x', source_key: 'x', source_type: 's3' });
    expect(external.body.detail.map((d: Json) => d.loc[1]).sort()).toEqual(['access_role_ref', 'bucket']);
    expect((await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'web', name: 'x', source_key: 'nginx', source_type: 'hosted' })).status).toBe(409);
    expect((await api.put('/v1/admin/hosted-sources/11', { dataset_id: 'nope', name: 'x', source_key: 'x', source_type: 'hosted' })).status).toBe(404);
    expect((await api.get('/v1/admin/sources/999')).status).toBe(404);
  });

  it('streams with the current ingest token only, into its own source only', async () => {
    const first = (await api.post('/v1/admin/sources/10/ingest-token')).body;
    expect(first).toMatchObject({ source_id: 10, token: expect.stringMatching(/^svcit\.v1\./) });
    const accepted = await stream('nginx', ndjson([{ rid: 'a1', line: 'GET /index.html 200' }]), first.token);
    expect(accepted.status).toBe(202);
    expect((await waitRun(accepted.body.ingest_run_id)).documents.parsed).toBe(1);

    const second = (await api.post('/v1/admin/sources/10/ingest-token')).body;
    expect((await stream('nginx', ndjson([{ rid: 'a2', line: 'x' }]), first.token)).status).toBe(401);
    expect((await stream('nginx', ndjson([{ rid: 'a2', line: 'GET /about 404' }]), second.token)).status).toBe(202);
    expect((await stream('web', ndjson([{ msg: 'not mine' }]), second.token)).status).toBe(403);
    for (const [method, path] of [['GET', '/v1/datasets'], ['POST', '/v1/search'], ['GET', '/v1/me'], ['GET', '/v1/admin/sources/10'], ['POST', '/v1/admin/sources/10/ingest-token']] as const) {
      expect((await api.call(method, path, { token: second.token, json: method === 'POST' ? {} : undefined })).status, path).toBe(401);
    }
    const source = (await api.get('/v1/admin/sources/10')).body;
    expect(source).toMatchObject({ ingest_token_configured: true, ingest_token_created_at: second.created_at, ingest_token_revoked_at: null });

    const revoked = await api.del('/v1/admin/sources/10/ingest-token');
    expect(revoked.body).toMatchObject({ ingest_token_configured: false, ingest_token_revoked_at: expect.any(String) });
    expect((await stream('nginx', ndjson([{ rid: 'a3', line: 'x' }]), second.token)).status).toBe(401);
    expect((await api.del('/v1/admin/sources/10/ingest-token')).status).toBe(409);
  });

  it('deletes a source with its records, objects and runs, and the text index forgets them across a restart', async () => {
    const own = await stream('web', ndjson([{ id: 'w1', msg: 'keepme alpha' }, { id: 'w2', msg: 'keepme beta' }]));
    await waitRun(own.body.ingest_run_id);
    await until('both nginx records', async () => ((await total('GET OR about')) >= 2 ? true : undefined));
    expect(await total('keepme')).toBe(2);
    const nginxObjects = (await api.get('/v1/ingest/runs?source_id=10')).body.runs.map((r: Json) => r.key);
    expect(nginxObjects.length).toBe(2);

    const job = await api.del('/v1/admin/sources/10');
    expect(job.status).toBe(202);
    expect(job.body).toMatchObject({ scope: 'source', target_source_id: 10, target_dataset_id: 'web', item_total_count: 2 });
    const done = await until('deletion', async () => {
      const j = (await api.get(`/v1/admin/data-deletion-jobs/${job.body.job_id}`)).body;
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(done.items.map((i: Json) => i.result.deleted_documents).sort()).toEqual([1, 1]);
    expect((await api.get('/v1/admin/sources/10')).status).toBe(404);
    expect((await api.get('/v1/ingest/runs?source_id=10')).body.runs).toEqual([]);
    expect(await total('GET OR about')).toBe(0);
    expect(await total('keepme')).toBe(2);
    expect((await api.get('/v1/datasets/web')).body.record_count).toBe(2);
    const hosted = join(dataDir, 'blobs', tenant, 'hosted', 'nginx');
    expect(existsSync(hosted) ? readdirSync(hosted, { recursive: true }).filter((f) => String(f).includes('.')) : []).toEqual([]);

    await server.stop();
    server = await serve(dataDir);
    api = client(server.url, { token, tenant });
    expect(await total('GET OR about')).toBe(0);
    expect(await total('keepme')).toBe(2);
  });
});
