/**
 * Bounded inputs at the HTTP door: the length and count caps of src/api/limits.ts on headers,
 * path parameters, query strings and bodies, checked before any work, over a real app on
 * loopback with a real data dir. The fuzzing that found these answered 500 (a tenant id or an id
 * past LMDB's key size); each case here must be a 4xx in the `{detail}` shape, naming the limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { routesOf } from '../src/server/app.js';
import { POLICY, policyKey } from '../src/server/policy.js';
import { useApp } from './helpers/app.js';
import { expectStatus, type Json, type Res } from './helpers/http.js';

let platformKey: string;
const { t, http } = useApp();

const long = (n: number) => 'a'.repeat(n);
/** The route's path with every parameter set to `value`. */
const fill = (url: string, value: string) => url.replace(/:[a-z_]+/g, value);

/** A 422 whose issues include one at `loc` of ajv's `type` (maxLength, maxItems, …) with its limit. */
function expectIssue(res: Res, loc: (string | number)[], type: string, limit: number) {
  expectStatus(res, 422);
  expect(res.body.detail, res.text.slice(0, 400)).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type, ctx: { limit } })]));
}

beforeAll(async () => {
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
  platformKey = expectStatus(await http.post('/v1/admin/platform-keys', { name: 'limits' }), 201).token;
});

describe('headers', () => {
  it('answers a tenant header past LIMITS.id with 400 naming the limit on every tenant route, before any lookup', async () => {
    const tenantRoutes = routesOf(t.app).filter((r) => ['tenant', 'ingest'].includes(POLICY[policyKey(r.method, r.url)].auth));
    expect(tenantRoutes.length).toBeGreaterThan(30);
    for (const r of tenantRoutes) {
      const res = await http.call(r.method, fill(r.url, '1'), { tenant: long(5000), ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { json: {} }) });
      expect(res.status, `${r.method} ${r.url}: ${res.text.slice(0, 200)}`).toBe(400);
      expect(res.body.detail).toBe(`the x-service-tenant-id header is longer than ${LIMITS.id} characters`);
    }
    // at the limit it is an ordinary unknown tenant
    expectStatus(await http.get('/v1/datasets', { tenant: long(LIMITS.id) }), 403);
  });

  it('answers an Authorization header past LIMITS.authorization with 401', async () => {
    const res = await http.get('/v1/datasets', { token: long(LIMITS.authorization) });
    expectStatus(res, 401);
    expect(res.body.detail).toBe(`the Authorization header is longer than ${LIMITS.authorization} characters`);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

});

describe('path parameters', () => {
  it('answers a 5 KB value in any path parameter with 422 (or 404), never 5xx', async () => {
    for (const r of routesOf(t.app).filter((r) => r.url.includes(':'))) {
      const token = POLICY[policyKey(r.method, r.url)].auth === 'platform' ? platformKey : undefined;
      const res = await http.call(r.method, fill(r.url, long(5000)), { token, ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { json: {} }) });
      expect([404, 422], `${r.method} ${r.url}: ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
      expect(res.body).toHaveProperty('detail');
    }
    expectIssue(await http.get(`/v1/ingest/runs/${long(5000)}`), ['path', 'ingest_run_id'], 'maxLength', LIMITS.id);
    expectIssue(await http.get(`/v1/datasets/${long(LIMITS.datasetId + 1)}`), ['path', 'dataset_id'], 'maxLength', LIMITS.datasetId);
  });

});

describe('strings and lists in request schemas', () => {
  const source = (extra: Record<string, unknown>) => ({ dataset_id: 'logs', name: 'src', source_key: 'src', source_type: 'hosted', ...extra });
  const put = (body: unknown) => http.put('/v1/admin/hosted-sources/7', body);

  it('caps names, descriptions and ids in bodies and query strings', async () => {
    expectIssue(await http.post('/v1/admin/datasets', { dataset_id: 'n', name: long(LIMITS.name + 1) }), ['body', 'name'], 'maxLength', LIMITS.name);
    expectIssue(await http.post('/v1/admin/datasets', { dataset_id: 'n', description: long(LIMITS.description + 1) }), ['body', 'description'], 'maxLength', LIMITS.description);
    expectIssue(await http.post('/v1/admin/datasets', { dataset_id: long(5000) }), ['body', 'dataset_id'], 'maxLength', LIMITS.datasetId);
    expectIssue(await http.post('/v1/admin/api-keys', { name: long(LIMITS.name + 1) }), ['body', 'name'], 'maxLength', LIMITS.name);
    expectIssue(await http.post('/v1/admin/semantic/filters/backfill', { dataset_id: long(5000) }), ['body', 'dataset_id'], 'maxLength', LIMITS.datasetId);
    expectIssue(await http.get(`/v1/admin/fields?dataset_id=${long(5000)}`), ['query', 'dataset_id'], 'maxLength', LIMITS.datasetId);
    expectIssue(await http.get(`/v1/admin/jobs?type=${long(5000)}`), ['query', 'type'], 'maxLength', LIMITS.id);
    expectIssue(await http.put('/v1/admin/hosted-sources/7', source({ source_key: long(LIMITS.sourceKey + 1) })), ['body', 'source_key'], 'maxLength', LIMITS.sourceKey);
  });

  it('caps field names and field lists in transform, search and semantic configs', async () => {
    const tooMany = Array.from({ length: LIMITS.datasetFields + 1 }, (_, i) => `f${i}`);
    expectIssue(await put(source({ transform_config: { drop: tooMany } })), ['body', 'transform_config', 'drop'], 'maxItems', LIMITS.datasetFields);
    expectIssue(await put(source({ transform_config: { id_field: long(LIMITS.fieldPath + 1) } })), ['body', 'transform_config', 'id_field'], 'maxLength', LIMITS.fieldPath);
    const renames = Object.fromEntries(tooMany.map((f) => [f, `${f}_x`]));
    expectIssue(await put(source({ transform_config: { rename: renames } })), ['body', 'transform_config', 'rename'], 'maxProperties', LIMITS.datasetFields);
    const longKey = await put(source({ transform_config: { rename: { [long(LIMITS.fieldPath + 1)]: 'x' } } }));
    expectStatus(longKey, 422);
    expect(longKey.body.detail.map((d: Json) => d.type)).toContain('propertyNames');
    const textFields = tooMany.map((field) => ({ field, boost: 1, natural_language: false }));
    expectIssue(await put(source({ search_config: { text_fields: textFields } })), ['body', 'search_config', 'text_fields'], 'maxItems', LIMITS.datasetFields);
    const semantic = { document_embeddings: { fields: [{ field: long(LIMITS.fieldPath + 1), max_chars: 10 }] } };
    expectIssue(await put(source({ semantic_config: semantic })), ['body', 'semantic_config', 'document_embeddings', 'fields', 0, 'field'], 'maxLength', LIMITS.fieldPath);
    expectIssue(await http.post('/v1/admin/datasets', { dataset_id: 'sem', semantic_fields: tooMany }), ['body', 'semantic_fields'], 'maxItems', LIMITS.datasetFields);
    const members = Object.fromEntries(Array.from({ length: LIMITS.configMembers + 1 }, (_, i) => [`m${i}`, 1]));
    expectIssue(await put(source({ parse_config: members })), ['body', 'parse_config'], 'maxProperties', LIMITS.configMembers);
    // within every limit, the same source is stored
    expectStatus(await put(source({ transform_config: { drop: tooMany.slice(0, 10), rename: { a: 'b' } }, parse_config: { format: 'ndjson' } })), 200);
  });

  it('caps the stream options and upload session ids', async () => {
    expectIssue(await http.call('POST', `/v1/ingest/sources/logs/stream?id_field=${long(LIMITS.fieldPath + 1)}`, { body: '{}\n' }), ['query', 'id_field'], 'maxLength', LIMITS.fieldPath);
    expectIssue(await http.post('/v1/ingest/sources/logs/uploads/abort', { upload_session_id: long(5000) }), ['body', 'upload_session_id'], 'maxLength', LIMITS.id);
  });
});
