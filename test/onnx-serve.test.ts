/**
 * `svc serve` with SVC_EMBEDDER=onnx on a tiny model built here: records are embedded by the
 * model in the server's onnx worker, and a semantic search ranks by its vectors. Also how a model
 * that cannot be used shows: at start for the server's own, in the run and the search for a source's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, svcAsync, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, ingestStream, until, type Json } from './helpers/http.js';
import { VOCAB, writeTinyModel } from './helpers/onnxModel.js';

const dir = tempDir('svc-onnx-serve-');
const modelDir = join(dir.path, 'tiny-model');
const dataDir = join(dir.path, 'data');
let server: Server;
let api: ReturnType<typeof client>;

const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');
const RECORDS = [
  { id: 'heart', title: 'patient report', body: 'heart attack in a patient' },
  { id: 'disk', title: 'node report', body: 'disk pressure warning on the node' },
  { id: 'market', title: 'market report', body: 'stock market price of the service' },
  { id: 'pets', title: 'a report', body: 'the cat and the dog' },
];

beforeAll(async () => {
  writeTinyModel(modelDir, { dims: VOCAB.length, normalize: true }); // a token of its own per dimension: vectors near by shared words
  const admin = init(dataDir);
  server = await serve(dataDir, { env: { SVC_EMBEDDER: 'onnx', SVC_EMBEDDER_MODEL: modelDir, SVC_EMBED_RETRY_MS: '100' } });
  api = client(server.url, { token: admin.token, tenant: admin.tenant_id });
});

afterAll(async () => {
  await server?.stop();
  dir.remove();
});

const runOf = async (id: string): Promise<Json> => expectStatus(await api.get(`/v1/ingest/runs/${id}`), 200);

describe('svc serve with the onnx embedder', () => {
  it('embeds ingested records with the model and ranks a semantic search by them', async () => {
    expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'notes' }), 201);
    const run = await ingestStream(api, 'notes', ndjson(RECORDS));
    const embedded = await until('records embedded', async () => ((await runOf(run.ingest_run_id)).ready_for.semantic_search ? runOf(run.ingest_run_id) : undefined));
    expect(embedded.documents).toMatchObject({ semantic_embedded: 4, semantic_failed: 0, semantic_total: 4 });

    const found = expectStatus(await api.post('/v1/search', { text: 'disk pressure warning', mode: 'semantic', datasets: ['notes'], limit: 4 }), 200);
    expect(found.mode).toBe('semantic');
    expect(found.records[0].id).toBe('disk');
    expect(found.records[0].score_kind).toBe('cosine');
    const heart = expectStatus(await api.post('/v1/search', { text: 'heart attack patient', semantic: true, datasets: ['notes'], limit: 4 }), 200);
    expect(heart.records[0].id).toBe('heart');
  });

  it('a source whose model cannot be loaded keeps its text searchable, says why, and a semantic search of it has no vectors to use', async () => {
    const broken = join(dir.path, 'broken-model');
    writeTinyModel(broken);
    writeFileSync(join(broken, 'model.onnx'), 'these bytes are not a model');
    expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'broken' }), 201);
    const source = expectStatus(await api.get('/v1/admin/sources?dataset_id=broken'), 200).sources[0];
    const semantic_config = { document_embeddings: { fields: [{ field: 'body', max_chars: 4000 }] }, embedder: { provider: 'onnx', model: broken } };
    expectStatus(await api.put(`/v1/admin/hosted-sources/${source.source_id}`, { dataset_id: 'broken', name: source.name, source_key: source.source_key, source_type: 'hosted', semantic_config }), 200);

    const run = await ingestStream(api, 'broken', ndjson(RECORDS));
    const failing = await until('embedding failure reported', async () => {
      const r = await runOf(run.ingest_run_id);
      return r.documents.semantic_failed > 0 ? r : undefined;
    });
    expect(failing.lifecycle.state).toBe('semantic_pending');
    expect(failing.lifecycle.reasons[0]).toMatch(/^embedding failed: onnx model '.*broken-model': model\.onnx is not a model onnxruntime can load: .*; retrying in/);
    expect(failing.ready_for).toMatchObject({ text_search: true, semantic_search: false });

    expect(expectStatus(await api.post('/v1/search', { text: 'disk', datasets: ['broken'] }), 200).records[0].id).toBe('disk');
    // no vectors yet: a semantic search of it alone is refused, and one over both datasets answers from the other
    expect((await api.post('/v1/search', { text: 'disk', mode: 'semantic', datasets: ['broken'] })).status).toBe(409);
    const both = expectStatus(await api.post('/v1/search', { text: 'disk pressure', mode: 'semantic', datasets: ['broken', 'notes'] }), 200);
    expect(both.records[0].provenance.dataset_id).toBe('notes');

    // the server is still up and its own model still embeds
    const again = expectStatus(await api.post('/v1/search', { text: 'stock market price', mode: 'semantic', datasets: ['notes'] }), 200);
    expect(again.records[0].id).toBe('market');
  });
});

describe('svc serve refuses an onnx embedder without its model', () => {
  it('fails at start with one line when SVC_EMBEDDER_MODEL is unset or names no model', async () => {
    const other = tempDir('svc-onnx-start-');
    try {
      for (const [env, message] of [
        [{ SVC_EMBEDDER: 'onnx' }, /SVC_EMBEDDER=onnx needs SVC_EMBEDDER_MODEL/],
        [{ SVC_EMBEDDER: 'onnx', SVC_EMBEDDER_MODEL: join(other.path, 'missing') }, /onnx model '.*missing': no such directory/],
      ] as const) {
        const r = await svcAsync(['serve', '--port', '0'], { dataDir: other.path, env });
        expect(r.status).not.toBe(0);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      }
    } finally {
      other.remove();
    }
  });
});
