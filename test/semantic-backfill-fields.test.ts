import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { Embedders } from '../src/engine/vector/embedders/embedders.js';
import { buildApp } from '../src/server/app.js';
import { fakeEmbeddings } from './helpers/fakeEmbeddings.js';
import { tempDir } from './helpers/cli.js';
import { client, until } from './helpers/http.js';

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

describe('filter backfill: filter_fields', () => {
  let fake: Awaited<ReturnType<typeof fakeEmbeddings>>;
  let dir: ReturnType<typeof tempDir>;
  let engine: Engine;
  let app: FastifyInstance;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    fake = await fakeEmbeddings();
    dir = tempDir('svc-backfill-');
    engine = await Engine.open(dir.path, {
      background: true,
      semantic: { embedders: new Embedders({ provider: 'openai', url: fake.url, model: 'fake' }, { batch: 16, documentTimeoutMs: 300, queryTimeoutMs: 300, documentAttempts: 2, queryAttempts: 1, backoffMs: 5 }), retryBaseMs: 100 },
    });
    const { tenant_id, token } = await engine.init('acme', 'admin@example.com');
    app = await buildApp(engine);
    api = client(await app.listen({ host: '127.0.0.1', port: 0 }), { token, tenant: tenant_id });
  });
  afterAll(async () => {
    await app?.close();
    await engine?.close();
    await fake?.close();
    dir?.remove();
  });

  it('reports every field a source declares (the union), not only those every source declares', async () => {
    expect((await api.post('/v1/admin/datasets', { dataset_id: 'mixed' })).status).toBe(201);
    const embed = { document_embeddings: { fields: [{ field: 'body', max_chars: 4000 }] } };
    const put = (id: number, key: string, semantic_config: object) =>
      api.put(`/v1/admin/hosted-sources/${id}`, { dataset_id: 'mixed', name: key, source_key: key, source_type: 'hosted', semantic_config });
    expect((await put(71, 'with-filters', { ...embed, filters: { fields: [{ field: 'level', array: false }, { field: 'host', array: false }] } })).status).toBe(200);
    expect((await put(72, 'without', embed)).status).toBe(200);
    for (const key of ['with-filters', 'without']) {
      const rows = Array.from({ length: 5 }, (_, i) => ({ body: `${key} event ${i}`, level: i % 2 ? 'warn' : 'info', host: `h${i}` }));
      const res = await api.call('POST', `/v1/ingest/sources/${key}/stream?format=ndjson`, { body: ndjson(rows) });
      expect(res.status).toBe(202);
    }
    await until('all ten embedded', async () => {
      const runs = (await api.get('/v1/ingest/runs?dataset_id=mixed')).body.runs as { documents: { semantic_embedded: number } }[];
      return runs.length === 2 && runs.every((r) => r.documents.semantic_embedded === 5) ? true : undefined;
    });
    const started = await api.post('/v1/admin/semantic/filters/backfill', { dataset_id: 'mixed' });
    expect(started.status).toBe(202);
    const done = await until('backfill done', async () => {
      const job = (await api.get(`/v1/admin/semantic/filters/backfill/${started.body.job_id}`)).body;
      return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
    });
    expect(done).toMatchObject({ status: 'succeeded', sources_processed: 2, records_restamped: 10 });
    expect([...done.filter_fields].sort()).toEqual(['host', 'level']);
    // one source's own backfill reports its own fields
    const own = await api.post('/v1/admin/semantic/filters/backfill', { dataset_id: 'mixed', source_id: 72 });
    const ownDone = await until('source backfill done', async () => {
      const job = (await api.get(`/v1/admin/semantic/filters/backfill/${own.body.job_id}`)).body;
      return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
    });
    expect(ownDone).toMatchObject({ status: 'succeeded', filter_fields: [] });
    // a filter on a field only one source stamps still finds the records of that source
    const found = await api.post('/v1/search', { text: 'event', mode: 'semantic', datasets: ['mixed'], where: [{ field: 'level', op: 'eq', value: 'warn' }], limit: 20 });
    expect(found.status).toBe(200);
    expect(found.body.records.length).toBeGreaterThan(0);
    for (const r of found.body.records) expect(r.metadata.level).toBe('warn');
  });
});
