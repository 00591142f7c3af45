/**
 * Semantic and hybrid search over HTTP, with an OpenAI-compatible provider started here on
 * loopback (deterministic vectors from the words of each input) that can be made to fail.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { Embedders } from '../src/engine/vector/embedders/embedders.js';
import { buildApp } from '../src/server/app.js';
import { fakeEmbeddings } from './helpers/fakeEmbeddings.js';
import { tempDir } from './helpers/cli.js';
import { client, until, type Json } from './helpers/http.js';

let fake: Awaited<ReturnType<typeof fakeEmbeddings>>;
let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let app: FastifyInstance;
let api: ReturnType<typeof client>;
let tenant: string;
let token: string;

const openEngine = () =>
  Engine.open(dir.path, {
    background: true, // as `svc serve` opens it: vectors are built as soon as runs are ready
    semantic: {
      embedders: new Embedders(
        { provider: 'openai', url: fake.url, model: 'fake' },
        { batch: 16, documentTimeoutMs: 300, queryTimeoutMs: 300, documentAttempts: 2, queryAttempts: 1, backoffMs: 5 },
      ),
      retryBaseMs: 100,
    },
  });

async function listen(): Promise<void> {
  app = await buildApp(engine);
  api = client(await app.listen({ host: '127.0.0.1', port: 0 }), { token, tenant });
}

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

async function ingest(source: string, rows: object[]): Promise<Json> {
  const res = await api.call('POST', `/v1/ingest/sources/${source}/stream?format=ndjson&id_field=id`, { body: ndjson(rows) });
  expect(res.status).toBe(202);
  return until('run ready', async () => {
    const run = (await api.get(`/v1/ingest/runs/${res.body.ingest_run_id}`)).body;
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });
}

const runOf = async (id: string) => (await api.get(`/v1/ingest/runs/${id}`)).body;
const search = (body: object) => api.post('/v1/search', body);
const vectorCount = (d: string) => {
  const space = engine.semantic.indexes.space(tenant, d)!;
  return engine.semantic.indexes.get(tenant, d, space).size;
};

async function sourceOf(datasetId: string): Promise<Json> {
  return (await api.get(`/v1/admin/sources?dataset_id=${datasetId}`)).body.sources[0];
}

async function configure(datasetId: string, semantic_config: object): Promise<void> {
  const s = await sourceOf(datasetId);
  const res = await api.put(`/v1/admin/hosted-sources/${s.source_id}`, { dataset_id: datasetId, name: s.name, source_key: s.source_key, source_type: 'hosted', semantic_config });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  fake = await fakeEmbeddings();
  dir = tempDir('svc-semantic-');
  engine = await openEngine();
  ({ tenant_id: tenant, token } = await engine.init('acme', 'admin@example.com'));
  await listen();
});

afterAll(async () => {
  await app?.close();
  await engine?.close();
  await fake?.close();
  dir?.remove();
});

describe('a provider that fails', () => {
  const batch = (from: number, n: number, word: string) => Array.from({ length: n }, (_, i) => ({ id: `r${from + i}`, title: `record ${from + i}`, body: `${word} service report number ${from + i}` }));

  it('leaves text ready, counts what failed, answers 503 to semantic queries, and embeds everything once it is back', async () => {
    expect((await api.post('/v1/admin/datasets', { dataset_id: 'ops' })).status).toBe(201);
    fake.set('ok');
    const first = await ingest('ops', batch(0, 30, 'kernel'));
    await until('first run embedded', async () => ((await runOf(first.ingest_run_id)).ready_for.semantic_search ? true : undefined));

    fake.set('error500');
    const second = await ingest('ops', batch(30, 40, 'zebrafish'));
    expect(second.status).toBe('ready');
    expect(second.ready_for.text_search).toBe(true);
    const failing = await until('failure recorded', async () => {
      const run = await runOf(second.ingest_run_id);
      return run.documents.semantic_failed > 0 ? run : undefined;
    });
    expect(failing.lifecycle.state).toBe('semantic_pending');
    expect(failing.lifecycle.repairable).toBe(true);
    expect(failing.lifecycle.reasons[0]).toMatch(/embedding failed: .*500/);
    expect(failing.ready_for.semantic_search).toBe(false);
    expect(failing.semantic_ready_at).toBeNull();
    expect(failing.documents.semantic_total).toBe(40);
    expect(failing.documents.semantic_embedded + failing.documents.semantic_failed).toBeLessThanOrEqual(40);

    // every way a provider fails turns into the same 503 for a query; text search goes on
    for (const mode of ['error500', 'rate429', 'hang', 'reset'] as const) {
      fake.set(mode);
      const started = Date.now();
      const res = await search({ text: 'zebrafish report', mode: 'semantic', datasets: ['ops'] });
      expect(res.status, mode).toBe(503);
      expect(res.body.detail.code).toBe('semantic_search_capacity_exhausted');
      expect(res.body.detail.message).toMatch(/temporarily exhausted.*retry/);
      expect(Date.now() - started).toBeLessThan(5000);
      const text = await search({ text: 'zebrafish', datasets: ['ops'] });
      expect(text.status).toBe(200);
      expect(text.body.total.value).toBe(40);
    }
    expect((await search({ text: 'zebrafish report', semantic: true, datasets: ['ops'] })).status).toBe(503);

    fake.set('ok');
    const healed = await until('second run embedded', async () => {
      const run = await runOf(second.ingest_run_id);
      return run.ready_for.semantic_search ? run : undefined;
    }, 20_000);
    expect(healed.documents).toMatchObject({ semantic_embedded: 40, semantic_failed: 0, semantic_total: 40 });
    expect(healed.lifecycle).toEqual({ state: 'ready', repairable: false, reasons: [] });
    expect(healed.semantic_ready_at).toMatch(/Z$/);
    expect(vectorCount('ops')).toBe(70);
    const found = await search({ text: 'zebrafish service report', mode: 'semantic', datasets: ['ops'], limit: 70 });
    expect(found.status).toBe(200);
    expect(found.body.records.filter((r: Json) => r.body.startsWith('zebrafish'))).toHaveLength(40);
    expect((await api.get('/v1/datasets/ops')).body.readiness.semantic_search).toBe(true);
  });
});

describe('filtered semantic search', () => {
  const levels = (i: number) => (i % 50 === 7 ? 'rare' : 'common');
  const rows = Array.from({ length: 400 }, (_, i) => ({
    id: `e${i}`,
    body: `disk pressure warning on node ${i % 13} while compacting segment ${i}`,
    level: levels(i),
    host: `h${i % 10}`,
    tags: i % 3 === 0 ? ['x', 'y'] : ['y'],
  }));

  beforeAll(async () => {
    fake.set('ok');
    await api.post('/v1/admin/datasets', { dataset_id: 'events' });
    await configure('events', {
      document_embeddings: { fields: [{ field: 'body', max_chars: 4000 }] },
      filters: { fields: [{ field: 'level', array: false }, { field: 'tags', array: true }] },
    });
    const run = await ingest('events', rows);
    await until('embedded', async () => ((await runOf(run.ingest_run_id)).ready_for.semantic_search ? true : undefined));
  });

  it('returns only records that match a stamped filter, and `limit` of them when enough match', async () => {
    const rare = await search({ text: 'disk pressure warning', mode: 'semantic', datasets: ['events'], where: [{ field: 'level', op: 'eq', value: 'rare' }], limit: 5 });
    expect(rare.status).toBe(200);
    expect(rare.body.records).toHaveLength(5);
    for (const r of rare.body.records) expect(r.metadata.level).toBe('rare');
    const all = await search({ text: 'disk pressure warning', mode: 'semantic', datasets: ['events'], where: [{ field: 'level', op: 'eq', value: 'rare' }], limit: 50 });
    expect(all.body.records).toHaveLength(rows.filter((r) => r.level === 'rare').length);
    const common = await search({ text: 'disk pressure warning', mode: 'semantic', datasets: ['events'], where: [{ field: 'level', op: 'eq', value: 'common' }], limit: 50 });
    expect(common.body.records).toHaveLength(50);
    for (const r of common.body.records) expect(r.metadata.level).toBe('common');
  });

  it('filters on array stamps, on fields that are not stamped, and in hybrid mode', async () => {
    const tagged = await search({ text: 'segment compacting', mode: 'semantic', datasets: ['events'], where: [{ field: 'tags', op: 'eq', value: 'x' }], limit: 20 });
    expect(tagged.body.records).toHaveLength(20);
    for (const r of tagged.body.records) expect(r.metadata.tags).toContain('x');
    const byHost = await search({ text: 'segment compacting', mode: 'semantic', datasets: ['events'], where: [{ field: 'host', op: 'eq', value: 'h3' }], limit: 30 });
    expect(byHost.body.records).toHaveLength(30);
    for (const r of byHost.body.records) expect(r.metadata.host).toBe('h3');
    const hybrid = await search({ text: 'disk pressure', mode: 'hybrid', datasets: ['events'], where: [{ field: 'level', op: 'eq', value: 'rare' }, { field: 'host', op: 'in', value: ['h7', 'h2'] }] });
    expect(hybrid.body.mode).toBe('hybrid');
    expect(hybrid.body.records.length).toBeGreaterThan(0);
    for (const r of hybrid.body.records) {
      expect(r.metadata.level).toBe('rare');
      expect(['h7', 'h2']).toContain(r.metadata.host);
      expect(r.score_kind).toBe('adaptive_zscore_fusion');
    }
  });

  it('cuts weak matches with semantic_min_score', async () => {
    const open = await search({ text: 'disk pressure warning node', mode: 'semantic', datasets: ['events'], limit: 100 });
    const scores = open.body.records.map((r: Json) => r.score);
    expect(open.body.records[0].score_kind).toBe('cosine');
    const cut = scores[30];
    const strict = await search({ text: 'disk pressure warning node', mode: 'semantic', datasets: ['events'], limit: 100, semantic_min_score: cut });
    expect(strict.body.records.length).toBeGreaterThan(0);
    expect(strict.body.records.length).toBeLessThan(100);
    for (const r of strict.body.records) expect(r.score).toBeGreaterThanOrEqual(cut);
  });

  it('backfills a new filter field onto existing vectors without calling the embedder', async () => {
    await configure('events', {
      document_embeddings: { fields: [{ field: 'body', max_chars: 4000 }] },
      filters: { fields: [{ field: 'level', array: false }, { field: 'tags', array: true }, { field: 'host', array: false }] },
    });
    const space = engine.semantic.indexes.space(tenant, 'events')!;
    const index = engine.semantic.indexes.get(tenant, 'events', space);
    expect(index.stamped?.has('host')).toBe(false);
    const calls = { requests: fake.state.requests, inputs: fake.state.inputs };
    const started = await api.post('/v1/admin/semantic/filters/backfill', { dataset_id: 'events' });
    expect(started.status).toBe(202);
    expect(started.body.job_id).toMatch(/^job_/);
    const done = await until('backfill done', async () => {
      const job = (await api.get(`/v1/admin/semantic/filters/backfill/${started.body.job_id}`)).body;
      return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
    });
    expect(done).toMatchObject({ status: 'succeeded', dataset_id: 'events', sources_processed: 1, objects_processed: 1, records_restamped: 400 });
    expect(done.filter_fields.sort()).toEqual(['host', 'level', 'tags']);
    expect({ requests: fake.state.requests, inputs: fake.state.inputs }).toEqual(calls);
    expect(index.stamped?.has('host')).toBe(true);
    const byHost = await search({ text: 'segment compacting', mode: 'semantic', datasets: ['events'], where: [{ field: 'host', op: 'eq', value: 'h4' }], limit: 40 });
    expect(byHost.body.records).toHaveLength(40);
    for (const r of byHost.body.records) expect(r.metadata.host).toBe('h4');
    expect((await api.get('/v1/admin/jobs?type=semantic_filter_backfill')).body.jobs[0].job_id).toBe(started.body.job_id);
    expect((await api.post('/v1/admin/semantic/filters/backfill', { dataset_id: 'nope' })).status).toBe(404);
  });
});

describe('requests semantic search refuses', () => {
  it('needs text (422), and vectors (409)', async () => {
    const empty = await search({ text: '  ', mode: 'semantic', datasets: ['events'] });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toEqual({ code: 'semantic_query_text_required', message: expect.stringMatching(/non-empty text/) });
    expect((await search({ semantic: true, datasets: ['events'] })).body.detail.code).toBe('semantic_query_text_required');
    await api.post('/v1/admin/datasets', { dataset_id: 'plain', semantic: false });
    await ingest('plain', [{ id: 'p1', body: 'nothing to embed here' }]);
    const none = await search({ text: 'embed', mode: 'hybrid', datasets: ['plain'] });
    expect(none.status).toBe(409);
    expect(none.body.detail).toMatch(/no dataset searched \('plain'\) has any/);
    expect((await search({ text: 'embed', datasets: ['plain'] })).status).toBe(200);
  });

  it('reads `semantic: true` as hybrid when there is text; `mode` wins', async () => {
    expect((await search({ text: 'disk', semantic: true, datasets: ['events'] })).body.mode).toBe('hybrid');
    expect((await search({ text: 'disk', semantic: true, mode: 'text', datasets: ['events'] })).body.mode).toBe('text');
    expect((await search({ text: 'disk', semantic: false, datasets: ['events'] })).body.records[0].score_kind).toBe('bm25');
  });
});

describe('vectors follow records', () => {
  it('chunks text past max_chars into more vectors, so its end is found too', async () => {
    await api.post('/v1/admin/datasets', { dataset_id: 'long' });
    await configure('long', { document_embeddings: { fields: [{ field: 'body', max_chars: 60 }] } });
    const filler = 'routine heartbeat message from the scheduler daemon '.repeat(4);
    const run = await ingest('long', [
      { id: 'needle', body: `${filler} quasar nebula pulsar` },
      ...Array.from({ length: 20 }, (_, i) => ({ id: `hay${i}`, body: `${filler} item ${i}` })),
    ]);
    await until('embedded', async () => ((await runOf(run.ingest_run_id)).ready_for.semantic_search ? true : undefined));
    const hit = await search({ text: 'quasar nebula pulsar', mode: 'semantic', datasets: ['long'], limit: 1 });
    expect(hit.body.records[0].id).toBe('needle');
    expect(vectorCount('long')).toBeGreaterThan(21);
  });

  it('drops the vectors of replaced and deleted records', async () => {
    await api.post('/v1/admin/datasets', { dataset_id: 'churn' });
    const first = await ingest('churn', [{ id: 'a', body: 'volcano eruption lava' }, { id: 'b', body: 'glacier ice melt' }]);
    await until('embedded', async () => ((await runOf(first.ingest_run_id)).ready_for.semantic_search ? true : undefined));
    const second = await ingest('churn', [{ id: 'a', body: 'desert sand dune' }]);
    await until('embedded', async () => ((await runOf(second.ingest_run_id)).ready_for.semantic_search ? true : undefined));
    expect(vectorCount('churn')).toBe(2);
    const top = await search({ text: 'volcano eruption lava', mode: 'semantic', datasets: ['churn'], limit: 2 });
    expect(top.body.records.map((r: Json) => r.body)).not.toContain('volcano eruption lava');

    // a second source of the dataset, then its deletion: its records' vectors leave with them
    const s = await api.put('/v1/admin/hosted-sources/900', { dataset_id: 'churn', name: 'extra', source_key: 'churn-extra', source_type: 'hosted', semantic_config: { document_embeddings: { fields: [{ field: 'body', max_chars: 4000 }] } } });
    expect(s.status).toBe(200);
    const extra = await ingest('churn-extra', [{ id: 'x1', body: 'comet tail dust' }, { id: 'x2', body: 'asteroid belt rock' }]);
    await until('embedded', async () => ((await runOf(extra.ingest_run_id)).ready_for.semantic_search ? true : undefined));
    expect(vectorCount('churn')).toBe(4);
    const job = (await api.del('/v1/admin/sources/900')).body;
    await until('deleted', async () => ((await api.get(`/v1/admin/data-deletion-jobs/${job.job_id}`)).body.status === 'succeeded' ? true : undefined));
    expect(vectorCount('churn')).toBe(2);
    const after = await search({ text: 'comet tail dust', mode: 'semantic', datasets: ['churn'] });
    expect(after.body.records.map((r: Json) => r.id).sort()).toEqual(['a', 'b']);

    // the whole dataset, then one of the same name: it starts with no vectors
    const gone = (await api.del('/v1/admin/datasets/churn')).body;
    await until('dataset deleted', async () => ((await api.get(`/v1/admin/data-deletion-jobs/${gone.job_id}`)).body.status === 'succeeded' ? true : undefined));
    await api.post('/v1/admin/datasets', { dataset_id: 'churn' });
    expect((await search({ text: 'glacier', mode: 'semantic', datasets: ['churn'] })).status).toBe(409);
  });

  it('answers the same after a restart, from the snapshot and without embedding again', async () => {
    const query = { text: 'disk pressure warning node 4', mode: 'semantic', datasets: ['events'], limit: 10 };
    const before = (await search(query)).body.records.map((r: Json) => [r.id, r.score.toFixed(4)]);
    await app.close();
    await engine.close();
    const inputs = fake.state.inputs;
    engine = await openEngine();
    await listen();
    const after = (await search(query)).body.records.map((r: Json) => [r.id, r.score.toFixed(4)]);
    expect(after).toEqual(before);
    expect(fake.state.inputs - inputs).toBe(1); // the query only
    expect(vectorCount('events')).toBe(400);
  });
});
