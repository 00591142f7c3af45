/**
 * End to end over HTTP: one real `svc serve` on loopback for the whole file, on a fresh data dir,
 * driven with undici. Every assertion is about values the API returns, checked against the
 * contract (spec/api-spec.md, CONTRACT.md) and against the real files that were ingested.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecret } from '../src/engine/auth/secret.js';
import { Sessions } from '../src/engine/auth/sessions.js';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

// ---------------------------------------------------------------------------------------------
// Helpers

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const RUN_DONE = new Set(['ready', 'failed']);

const sshPath = join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log');
const nginxPath = join(DATA, 'ingest/nginxplus_status.ndjson');
const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

let dir: ReturnType<typeof tempDir>;
let server: Server;
let admin: { tenant_id: string; user_id: string; token: string };

const { call, get, post } = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));

async function createDataset(datasetId: string, extra: Record<string, unknown> = {}): Promise<Json> {
  return expectStatus(await post('/v1/admin/datasets', { dataset_id: datasetId, ...extra }), 201);
}

/** POST …/stream: returns the 202 run as the server answered it. */
async function streamIngest(sourceKey: string, body: string | Buffer, format: string, contentType = 'application/octet-stream', query = ''): Promise<Json> {
  const res = await call('POST', `/v1/ingest/sources/${sourceKey}/stream?format=${format}${query}`, { body, contentType });
  return expectStatus(res, 202);
}

async function waitRun(runId: string): Promise<Json> {
  return until(`run ${runId} to finish`, async () => {
    const run = expectStatus(await get(`/v1/ingest/runs/${runId}`), 200);
    return RUN_DONE.has(run.status) ? run : undefined;
  });
}

/** Creates a dataset, streams `body` into it, and waits for the run to be ready. */
async function datasetWith(datasetId: string, body: string | Buffer, format: string, contentType?: string, query?: string): Promise<Json> {
  await createDataset(datasetId);
  const accepted = await streamIngest(datasetId, body, format, contentType, query);
  const run = await waitRun(accepted.ingest_run_id);
  expect(run.status, JSON.stringify(run.errors ?? run.error_message)).toBe('ready');
  return run;
}

async function search(req: Record<string, unknown>): Promise<Json> {
  return expectStatus(await post('/v1/search', req), 200);
}

const ids = (env: Json): string[] => env.records.map((r: Json) => r.id);
const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** The log lines the server wrote so far, parsed. */
const logLines = () => server.logs().split('\n').filter((l) => l !== '');

// ---------------------------------------------------------------------------------------------
// Data sets used by several blocks

/** OpenSSH_2k.log as lines: the file uses CRLF and has no final newline. */
const sshBytes = readFileSync(sshPath);
const sshLines = sshBytes.toString('utf8').split('\r\n');

const LEVELS = ['INFO', 'INFO', 'INFO', 'WARN', 'WARN', 'ERROR'];
const SERVICES = ['api', 'db', 'web'];

/** Generated events, their timestamps 5 min, 15 min, … back from now (so `last: 1h` holds exactly 6). */
function makeEvents(now: number) {
  return Array.from({ length: 48 }, (_, i) => {
    const ev: Record<string, unknown> = {
      id: `ev-${String(i).padStart(2, '0')}`,
      timestamp: new Date(now - (i * 10 + 5) * 60_000).toISOString(),
      level: LEVELS[i % 6],
      service: SERVICES[i % 3],
      latency_ms: 10 + i * 2.5,
      msg:
        i % 8 === 0 ? `disk full on volume vol${i}` : i % 8 === 4 ? `full disk check scheduled for vol${i}` : `request handled by worker w${i}`,
    };
    if (i % 5 === 0) ev.user = `u${i}`;
    return ev;
  });
}
type Event = ReturnType<typeof makeEvents>[number];

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  dir = tempDir('svc-e2e-api-');
  admin = init(dir.path);
  server = await serve(dir.path);
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('health and OpenAPI', () => {
  it('GET /healthz answers 200 {status: "ok"} without credentials, with the event loop\'s delay since the last reset', async () => {
    const res = await get('/healthz?reset=true', { token: null, tenant: null });
    const body = expectStatus(res, 200);
    expect(body).toMatchObject({ status: 'ok', event_loop: { delay_max_ms: expect.any(Number), delay_p99_ms: expect.any(Number) } });
    expect(body.event_loop.delay_max_ms).toBeGreaterThanOrEqual(body.event_loop.delay_p99_ms);
    expect(expectStatus(await get('/healthz?reset=nope', { token: null, tenant: null }), 422).detail[0].loc).toEqual(['query', 'reset']);
  });

  it('GET /openapi.json is an OpenAPI 3 document listing the /v1 paths', async () => {
    const doc = expectStatus(await get('/openapi.json', { token: null, tenant: null }), 200);
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe('1.0.0');
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/v1/me',
      '/v1/admin/datasets',
      '/v1/datasets',
      '/v1/datasets/{dataset_id}',
      '/v1/admin/datasets/{dataset_id}',
      '/v1/search',
      '/v1/ingest/sources/{source_key}/stream',
      '/v1/ingest/runs',
      '/v1/ingest/runs/{ingest_run_id}',
      '/v1/admin/fields',
    ]) {
      expect(paths).toContain(p);
    }
    expect(Object.keys(doc.paths['/v1/search'])).toContain('post');
    expect(Object.keys(doc.paths['/v1/admin/datasets'])).toContain('post');
  });
});

describe('authentication and tenant selection', () => {
  it('no Authorization header → 401 with a detail string', async () => {
    const res = await get('/v1/datasets', { token: null });
    expect(typeof expectStatus(res, 401).detail).toBe('string');
  });

  it('a garbage bearer token, or a non-bearer scheme → 401', async () => {
    expect(typeof expectStatus(await get('/v1/datasets', { token: 'garbage' }), 401).detail).toBe('string');
    expect(typeof expectStatus(await get('/v1/datasets', { token: null, headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } }), 401).detail).toBe('string');
    expect(typeof expectStatus(await get('/v1/me', { token: 'a.b.c', tenant: null }), 401).detail).toBe('string');
  });

  it('a well-formed JWT signed with another secret → 401', async () => {
    const forged = await new SignJWT({ typ: 'session' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(admin.user_id)
      .setIssuer('svc')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(randomBytes(32));
    expect(typeof expectStatus(await get('/v1/datasets', { token: forged }), 401).detail).toBe('string');
    expect(expectStatus(await get('/v1/me', { token: forged, tenant: null }), 401).detail).toEqual(expect.any(String));
  });

  it('an expired session → 401', async () => {
    const minted = svc(['token', 'create', '--email', 'admin@localhost', '--ttl', '1', '--output', 'json'], { dataDir: dir.path });
    expect(minted.status, minted.stderr).toBe(0);
    const { token } = minted.json();
    expect(decodeJwt(token).exp! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(1);
    // a session for the same user signed with the data dir's secret as svc signs one, but a minute past its expiry
    const secret = loadSecret(dir.path);
    const expired = await new Sessions(secret).issue(admin.user_id, -60);
    const exp = decodeJwt(expired).exp!;
    expect(exp * 1000).toBeLessThan(Date.now());
    await jwtVerify(expired, secret, { issuer: 'svc', currentDate: new Date((exp - 1) * 1000) }); // its signature holds
    expect(expectStatus(await get('/v1/datasets', { token: expired }), 401).detail).toMatch(/expired/);
    expectStatus(await get('/v1/me', { token: expired, tenant: null }), 401);
  });

  it('a valid token without the tenant header on a tenant route → 400', async () => {
    const res = await get('/v1/datasets', { tenant: null });
    expect(expectStatus(res, 400).detail).toMatch(/x-service-tenant-id/);
  });

  it('a tenant the user is not a member of → 403', async () => {
    const res = await get('/v1/datasets', { tenant: 'ten_00000000000000000000000000' });
    expect(typeof expectStatus(res, 403).detail).toBe('string');
    // an existing tenant of another data dir is just as foreign here
    const other = tempDir('svc-e2e-other-');
    try {
      const foreign = init(other.path);
      expectStatus(await get('/v1/datasets', { tenant: foreign.tenant_id }), 403);
    } finally {
      other.remove();
    }
  });

  it('checks in order: 401 before 400 before 403 before body validation', async () => {
    const badBody = { dataset_id: 'Bad Id!' };
    expectStatus(await post('/v1/admin/datasets', badBody, { token: null, tenant: null }), 401);
    expectStatus(await post('/v1/admin/datasets', badBody, { token: 'garbage', tenant: null }), 401);
    expectStatus(await post('/v1/admin/datasets', badBody, { token: 'garbage', tenant: 'ten_nope' }), 401);
    expectStatus(await post('/v1/admin/datasets', badBody, { tenant: null }), 400);
    expectStatus(await post('/v1/admin/datasets', badBody, { tenant: 'ten_nope' }), 403);
    expectStatus(await post('/v1/admin/datasets', badBody), 422);
  });

  it('GET /v1/me needs no tenant header and describes the caller and its tenants', async () => {
    const me = expectStatus(await get('/v1/me', { tenant: null }), 200);
    expect(me).toEqual({
      user_id: admin.user_id,
      email: 'admin@localhost',
      is_staff: false,
      tenants: [{ tenant_id: admin.tenant_id, name: 'default', role: 'Admin', is_admin: true }],
    });
    expectStatus(await get('/v1/me', { token: null, tenant: null }), 401);
  });
});

describe('datasets', () => {
  it('POST /v1/admin/datasets → 201 with the full dataset', async () => {
    const before = Date.now();
    const ds = await createDataset('crud-a', { name: 'CRUD A', description: 'made by e2e', retention_days: 7 });
    expect(ds).toEqual({
      dataset_id: 'crud-a',
      tenant_id: admin.tenant_id,
      name: 'CRUD A',
      description: 'made by e2e',
      retention_days: 7,
      record_count: 0,
      sources: [expect.any(Number)],
      readiness: { text_search: false, sql_search: false, semantic_search: false },
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Date.parse(ds.created_at)).toBeGreaterThanOrEqual(before - 1000);
    // defaults: name is the id, description and retention null
    const plain = await createDataset('crud-b', { semantic: false });
    expect(plain).toMatchObject({ dataset_id: 'crud-b', name: 'crud-b', description: null, retention_days: null, record_count: 0 });
  });

  it('a duplicate dataset_id → 409 naming the dataset', async () => {
    const res = await post('/v1/admin/datasets', { dataset_id: 'crud-a' });
    expect(expectStatus(res, 409).detail).toMatch(/crud-a/);
  });

  it("an invalid id like 'Bad Id!' → 422 HTTPValidationError at body.dataset_id", async () => {
    const body = expectStatus(await post('/v1/admin/datasets', { dataset_id: 'Bad Id!' }), 422);
    expect(Array.isArray(body.detail)).toBe(true);
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]).toMatchObject({ loc: ['body', 'dataset_id'], msg: expect.any(String), type: expect.any(String) });
  });

  it('a missing body member → 422 of type missing', async () => {
    const body = expectStatus(await post('/v1/admin/datasets', { name: 'no id' }), 422);
    expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'dataset_id'], type: 'missing', msg: expect.any(String) }));
  });

  it('a malformed JSON body → 422 of type json_invalid', async () => {
    const res = await call('POST', '/v1/admin/datasets', { body: '{"dataset_id": "x",', contentType: 'application/json' });
    const body = expectStatus(res, 422);
    expect(body.detail).toEqual([expect.objectContaining({ loc: ['body'], type: 'json_invalid', msg: expect.any(String) })]);
  });

  it('an unknown body member → 422 at that member', async () => {
    const body = expectStatus(await post('/v1/admin/datasets', { dataset_id: 'crud-x', colour: 'blue' }), 422);
    expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'colour'], msg: expect.any(String), type: expect.any(String) }));
    expectStatus(await get('/v1/datasets/crud-x'), 404);
  });

  it('GET /v1/datasets lists them', async () => {
    const list = expectStatus(await get('/v1/datasets'), 200);
    expect(list.next_cursor).toBeNull();
    const mine = list.datasets.filter((d: Json) => d.dataset_id.startsWith('crud-'));
    expect(mine.map((d: Json) => d.dataset_id).sort()).toEqual(['crud-a', 'crud-b']);
    expect(mine.find((d: Json) => d.dataset_id === 'crud-a')).toMatchObject({ name: 'CRUD A', tenant_id: admin.tenant_id, record_count: 0 });
  });

  it('GET /v1/datasets/{id} carries record_count and readiness after an ingest', async () => {
    const accepted = await streamIngest('crud-b', ndjson([{ msg: 'one' }, { msg: 'two' }, { msg: 'three' }]), 'ndjson');
    expect((await waitRun(accepted.ingest_run_id)).status).toBe('ready');
    const ds = expectStatus(await get('/v1/datasets/crud-b'), 200);
    expect(ds).toMatchObject({ dataset_id: 'crud-b', record_count: 3, readiness: { text_search: true, semantic_search: false } });
    expect(ds.sources).toEqual([accepted.source_id]);
  });

  it('GET of an unknown dataset → 404 with a detail naming it', async () => {
    const body = expectStatus(await get('/v1/datasets/no-such-dataset'), 404);
    expect(typeof body.detail).toBe('string');
    expect(body.detail).toContain('no-such-dataset');
  });

  it('DELETE removes the dataset: a later GET is 404', async () => {
    const res = await call('DELETE', '/v1/admin/datasets/crud-b');
    const job = expectStatus(res, 202);
    expect(job).toMatchObject({ scope: 'dataset', target_dataset_id: 'crud-b', item_total_count: 1 });
    expect(['pending', 'running', 'succeeded']).toContain(job.status);
    const done: Json = await until('the deletion job to succeed', async () => {
      const j = expectStatus(await get(`/v1/admin/data-deletion-jobs/${job.job_id}`), 200);
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(done.items[0]).toMatchObject({ item_type: 'object_document', status: 'succeeded', attempt_count: 1, result: { deleted_documents: 3 } });
    expect(done).toMatchObject({ item_succeeded_count: 1, item_pending_count: 0, error_message: null });
    expect(expectStatus(await get('/v1/datasets/crud-b'), 404).detail).toContain('crud-b');
    expectStatus(await call('DELETE', '/v1/admin/datasets/crud-b'), 404);
    const list = expectStatus(await get('/v1/datasets'), 200);
    expect(list.datasets.map((d: Json) => d.dataset_id)).not.toContain('crud-b');
  });
});

describe('ingest stream and runs', () => {
  const rows = Array.from({ length: 25 }, (_, i) => ({ id: `ok-${i}`, msg: `ingest row number ${i} zebra${i}`, n: i }));
  const payload = ndjson(rows);
  let accepted: Json;
  let run: Json;

  beforeAll(async () => {
    await createDataset('ingest-ok', { semantic: false }); // text only: no embedding to wait for
    accepted = await streamIngest('ingest-ok', payload, 'ndjson', 'application/octet-stream');
    run = await waitRun(accepted.ingest_run_id);
  });

  it('POST …/stream → 202 with an ingest run that is queued, running or ready', () => {
    expect(accepted.ingest_run_id).toMatch(/^run_/);
    expect(['queued', 'running', 'ready']).toContain(accepted.status);
    expect(accepted).toMatchObject({ tenant_id: admin.tenant_id, dataset_id: 'ingest-ok', source_id: expect.any(Number), format: 'ndjson' });
    expect(accepted.etag).toBe(md5(payload));
  });

  it('the 202 run is a consistent snapshot (lifecycle.state and started_at agree with status)', () => {
    // the answer must describe the run at one moment, not a mix of two
    if (accepted.status === 'queued') {
      expect(accepted.started_at).toBeNull();
      expect(accepted.lifecycle.state).toBe('queued');
    } else {
      expect(accepted.started_at).toMatch(ISO);
      expect(accepted.lifecycle.state).toBe(accepted.status);
    }
  });

  it('the finished run has every field of the spec, with real values', () => {
    expect(run).toMatchObject({
      ingest_run_id: accepted.ingest_run_id,
      tenant_id: admin.tenant_id,
      dataset_id: 'ingest-ok',
      source_id: accepted.source_id,
      bucket: expect.any(String),
      key: expect.any(String),
      etag: md5(payload),
      input_kind: expect.any(String),
      status: 'ready',
      error_code: null,
      error_message: null,
    });
    for (const k of ['upload_session_id', 'connector_run_id', 'ingest_failure_id', 'reindex_job_id']) expect(run).toHaveProperty(k);
    expect(run.documents).toMatchObject({
      expected: 25,
      parsed: 25,
      schema_observed: 25,
      index_committed: 25,
      semantic_embedded: 0,
      semantic_failed: 0,
      semantic_total: 0,
    });
    for (const v of Object.values(run.documents)) expect(Number.isInteger(v)).toBe(true);
    expect(run.lifecycle).toEqual({ reasons: [], repairable: false, state: 'ready' });
    expect(run.ready_for).toEqual({ text_search: true, sql_search: expect.any(Boolean), semantic_search: false });
    for (const k of ['created_at', 'queued_at', 'started_at', 'completed_at', 'text_indexed_at', 'updated_at']) expect(run[k], k).toMatch(ISO);
    expect(run.failed_at).toBeNull();
    expect(run.semantic_ready_at).toBeNull();
    const t = (k: string) => Date.parse(run[k]);
    expect(t('created_at')).toBeLessThanOrEqual(t('queued_at'));
    expect(t('queued_at')).toBeLessThanOrEqual(t('started_at'));
    expect(t('started_at')).toBeLessThanOrEqual(t('completed_at'));
    expect(t('completed_at')).toBeLessThanOrEqual(t('updated_at'));
  });

  it('GET /v1/ingest/runs?status=ready lists it; other statuses do not', async () => {
    const ready = expectStatus(await get('/v1/ingest/runs?status=ready'), 200);
    expect(ready.runs.map((r: Json) => r.ingest_run_id)).toContain(run.ingest_run_id);
    expect(ready.runs.every((r: Json) => r.status === 'ready')).toBe(true);
    expect(ready.runs.find((r: Json) => r.ingest_run_id === run.ingest_run_id)).toEqual(run);
    const failed = expectStatus(await get('/v1/ingest/runs?status=failed'), 200);
    expect(failed.runs.map((r: Json) => r.ingest_run_id)).not.toContain(run.ingest_run_id);
    const byDataset = expectStatus(await get('/v1/ingest/runs?dataset_id=ingest-ok'), 200);
    expect(byDataset.runs.map((r: Json) => r.ingest_run_id)).toEqual([run.ingest_run_id]);
  });

  it('the ingested rows are searchable', async () => {
    const env = await search({ text: 'zebra7', datasets: ['ingest-ok'] });
    expect(ids(env)).toEqual(['ok-7']);
    expect(env.records[0].metadata).toEqual({ n: 7 });
    expect(env.records[0].provenance.line).toBe(8);
  });

  it('re-sending the same rows counts duplicates; a changed row replaces the old one', async () => {
    const again = await waitRun((await streamIngest('ingest-ok', payload, 'ndjson')).ingest_run_id);
    expect(again.documents).toMatchObject({ expected: 25, parsed: 25, duplicates: 25 });
    expect(expectStatus(await get('/v1/datasets/ingest-ok'), 200).record_count).toBe(25);
    expect(ids(await search({ text: 'zebra3', datasets: ['ingest-ok'] }))).toEqual(['ok-3']);

    const changed = ndjson([{ id: 'ok-3', msg: 'ingest row number 3 giraffe3', n: 3 }]);
    const replaced = await waitRun((await streamIngest('ingest-ok', changed, 'ndjson')).ingest_run_id);
    expect(replaced.documents).toMatchObject({ parsed: 1, duplicates: 0 });
    expect(expectStatus(await get('/v1/datasets/ingest-ok'), 200).record_count).toBe(25);
    expect(ids(await search({ text: 'zebra3', datasets: ['ingest-ok'] }))).toEqual([]);
    const now = await search({ text: 'giraffe3', datasets: ['ingest-ok'] });
    expect(ids(now)).toEqual(['ok-3']);
    expect(now.records[0].provenance).toMatchObject({ source_key: replaced.key, source_etag: md5(changed), line: 1 });
    expect((await search({ datasets: ['ingest-ok'], where: [{ field: 'id', op: 'eq', value: 'ok-3' }] })).total.value).toBe(1);
  });

  it('accepts application/x-ndjson and text/plain bodies too', async () => {
    await createDataset('ingest-ct');
    const a = await streamIngest('ingest-ct', ndjson([{ msg: 'via ndjson content type' }]), 'ndjson', 'application/x-ndjson');
    const b = await streamIngest('ingest-ct', 'via plain text content type\n', 'text', 'text/plain');
    expect((await waitRun(a.ingest_run_id)).documents.parsed).toBe(1);
    expect((await waitRun(b.ingest_run_id)).documents.parsed).toBe(1);
    expect(expectStatus(await get('/v1/datasets/ingest-ct'), 200).record_count).toBe(2);
  });

  it('bad JSON and invalid UTF-8 lines are counted as malformed, named by line, and the good lines still land', async () => {
    await createDataset('ingest-bad');
    const body = Buffer.concat([
      Buffer.from('{"id":"g1","msg":"good line alpha quokka"}\n'),
      Buffer.from('{"id":"b1","msg": not json}\n'),
      Buffer.from('{"id":"g2","msg":"good line beta quokka"}\n'),
      Buffer.concat([Buffer.from('{"id":"b2","msg":"bad '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n')]),
      Buffer.from('{"id":"g3","msg":"good line gamma quokka"}\n'),
    ]);
    const done = await waitRun((await streamIngest('ingest-bad', body, 'ndjson', 'application/x-ndjson')).ingest_run_id);
    expect(done.status).toBe('ready');
    expect(done.documents).toMatchObject({ expected: 5, parsed: 3, index_committed: 3, malformed: 2 });
    expect(done.errors.map((e: Json) => e.line)).toEqual([2, 4]);
    for (const e of done.errors) expect(e.reason).toEqual(expect.any(String));
    expect(done.errors[1].reason).toMatch(/utf-?8/i);
    const env = await search({ text: 'quokka', datasets: ['ingest-bad'] });
    expect(ids(env).sort()).toEqual(['g1', 'g2', 'g3']);
    expect(env.records.map((r: Json) => r.provenance.line).sort()).toEqual([1, 3, 5]);
  });

  it('an empty body → the run ends failed with an error_code', async () => {
    await createDataset('ingest-empty');
    const accepted = await streamIngest('ingest-empty', '', 'ndjson');
    const done = await waitRun(accepted.ingest_run_id);
    expect(done.status).toBe('failed');
    expect(done.error_code).toEqual(expect.any(String));
    expect(done.error_message).toEqual(expect.any(String));
    expect(done.failed_at).toMatch(ISO);
    expect(done.lifecycle.state).toBe('failed');
    expect(done.ready_for.text_search).toBe(false);
    const failed = expectStatus(await get('/v1/ingest/runs?status=failed'), 200);
    expect(failed.runs.map((r: Json) => r.ingest_run_id)).toContain(accepted.ingest_run_id);
  });

  it('an unknown format → 422 at query.format', async () => {
    const res = await call('POST', '/v1/ingest/sources/ingest-ok/stream?format=xml', { body: 'x', contentType: 'text/plain' });
    expect(expectStatus(res, 422).detail).toContainEqual(expect.objectContaining({ loc: ['query', 'format'] }));
  });

  it('an unknown source key → 404 naming it', async () => {
    const res = await call('POST', '/v1/ingest/sources/no-such-source/stream?format=text', { body: 'x\n', contentType: 'text/plain' });
    expect(expectStatus(res, 404).detail).toContain('no-such-source');
  });

  it('a bad run-list filter → 422 at the query parameter', async () => {
    expect(expectStatus(await get('/v1/ingest/runs?status=done'), 422).detail).toContainEqual(expect.objectContaining({ loc: ['query', 'status'] }));
    expect(expectStatus(await get('/v1/ingest/runs?limit=0'), 422).detail).toContainEqual(expect.objectContaining({ loc: ['query', 'limit'] }));
  });

  it('an unknown run id → 404 naming it', async () => {
    const body = expectStatus(await get('/v1/ingest/runs/run_00000000000000000000000000'), 404);
    expect(body.detail).toContain('run_00000000000000000000000000');
  });
});

describe('provenance of OpenSSH_2k.log ingested as text', () => {
  let run: Json;

  beforeAll(async () => {
    run = await datasetWith('ssh', sshBytes, 'text', 'text/plain', '&filename=OpenSSH_2k.log');
  });

  it('the run read every line of the file', () => {
    expect(sshLines).toHaveLength(2000);
    expect(run.documents).toMatchObject({ expected: 2000, parsed: 2000, index_committed: 2000, malformed: 0 });
    expect(run.etag).toBe(md5(sshBytes));
    expect(run.key).toMatch(/OpenSSH_2k\.log$/);
  });

  it.each(['Failed password', 'invalid user', 'Accepted password', 'authentication failure', 'Connection closed', 'reverse mapping'])(
    "each record found by '%s' is exactly its source line, with full provenance",
    async (text) => {
      const env = await search({ text, datasets: ['ssh'], limit: 50 });
      expect(env.records.length).toBeGreaterThan(0);
      for (const r of env.records) {
        const p = r.provenance;
        expect(Number.isInteger(p.line)).toBe(true);
        expect(r.body).toBe(sshLines[p.line - 1]);
        expect(p).toEqual({
          dataset_id: 'ssh',
          tenant_id: admin.tenant_id,
          source_bucket: run.bucket,
          source_key: run.key,
          source_etag: md5(sshBytes),
          line: p.line,
          transform_version: expect.any(Number),
        });
      }
    },
  );
});

describe('search', () => {
  const now = Date.now();
  const events = makeEvents(now);
  const count = (pred: (e: Event) => boolean) => events.filter(pred).length;
  const idsWhere = (pred: (e: Event) => boolean) => events.filter(pred).map((e) => e.id as string).sort();

  beforeAll(async () => {
    // ssh is ingested by the provenance block; this block adds timestamped events
    await datasetWith('events', ndjson(events), 'ndjson', 'application/x-ndjson');
  });

  describe('envelope and ranking', () => {
    it('has search_id, took_ms, mode, total, records, aggregations and next_cursor', async () => {
      const env = await search({ text: 'failed password', datasets: ['ssh'], limit: 5 });
      expect(Object.keys(env).sort()).toEqual(expect.arrayContaining(['aggregations', 'mode', 'next_cursor', 'records', 'search_id', 'took_ms', 'total']));
      expect(env.search_id).toMatch(/^srch_/);
      expect(typeof env.took_ms).toBe('number');
      expect(env.took_ms).toBeGreaterThanOrEqual(0);
      expect(env.mode).toBe('text');
      expect(env.total).toEqual({ relation: expect.stringMatching(/^(eq|gte)$/), value: expect.any(Number) });
      expect(env.total.value).toBeGreaterThan(5);
      expect(env.records).toHaveLength(5);
      expect(env.aggregations).toEqual({});
      expect(typeof env.next_cursor).toBe('string');
      for (const r of env.records) {
        expect(r).toMatchObject({ id: expect.any(String), body: expect.any(String), metadata: expect.any(Object), created_at: expect.stringMatching(ISO) });
        expect(r).toHaveProperty('title');
      }
    });

    it('scores with bm25, best first, with <em> snippets of the matched terms', async () => {
      const env = await search({ text: 'failed password', datasets: ['ssh'], limit: 20 });
      const scores = env.records.map((r: Json) => r.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      for (const r of env.records) {
        expect(r.score_kind).toBe('bm25');
        expect(r.score).toBeGreaterThan(0);
        expect(r.snippets.length).toBeGreaterThan(0);
        const marked = r.snippets.join(' ').match(/<em>([^<]+)<\/em>/g) ?? [];
        expect(marked.length).toBeGreaterThan(0);
        for (const m of marked) expect(m.replace(/<\/?em>/g, '').toLowerCase()).toMatch(/^(fail|password)/);
      }
    });

    it('a cursor walks every hit exactly once; the pages together are the one big page', async () => {
      const req = { text: 'failed password', datasets: ['ssh'] };
      const all = await search({ ...req, limit: 1000 });
      expect(all.next_cursor).toBeNull();
      expect(all.records).toHaveLength(all.total.value);
      const seen: string[] = [];
      let page = await search({ ...req, limit: 50 });
      let pages = 1;
      for (;;) {
        expect(page.total.value).toBe(all.total.value);
        expect(page.records.length).toBeLessThanOrEqual(50);
        seen.push(...ids(page));
        if (page.next_cursor === null) break;
        page = await search({ ...req, limit: 50, cursor: page.next_cursor });
        pages++;
        expect(pages).toBeLessThan(100);
      }
      expect(pages).toBe(Math.ceil(all.total.value / 50));
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(ids(all));
    });

    it('pages keep to the hits of the first page even when records arrive in between', async () => {
      await datasetWith('paging', ndjson(Array.from({ length: 30 }, (_, i) => ({ id: `p-${i}`, msg: `pageable item ${i}` }))), 'ndjson');
      const req = { text: 'pageable', datasets: ['paging'], limit: 10 };
      const first = await search(req);
      expect(first.total.value).toBe(30);
      const late = await streamIngest('paging', ndjson(Array.from({ length: 10 }, (_, i) => ({ id: `late-${i}`, msg: `pageable late ${i}` }))), 'ndjson');
      expect((await waitRun(late.ingest_run_id)).status).toBe('ready');
      const seen = ids(first);
      for (let page = first; page.next_cursor !== null; ) {
        page = await search({ ...req, cursor: page.next_cursor });
        expect(page.total.value).toBe(30);
        seen.push(...ids(page));
      }
      expect(seen.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `p-${i}`).sort());
      expect((await search({ ...req, limit: 100 })).total.value).toBe(40);
    });

    it('a record replaced while paging does not make later pages skip unchanged hits', async () => {
      await datasetWith('paging2', ndjson(Array.from({ length: 30 }, (_, i) => ({ id: `q-${i}`, msg: `turnable item ${i}` }))), 'ndjson');
      const req = { text: 'turnable', datasets: ['paging2'], limit: 10 };
      const first = await search(req);
      expect(first.total.value).toBe(30);
      const replacedId = first.records[0].id;
      const upd = await streamIngest('paging2', ndjson([{ id: replacedId, msg: 'turnable item, edited' }]), 'ndjson');
      expect((await waitRun(upd.ingest_run_id)).status).toBe('ready');
      const seen = ids(first);
      for (let page = first; page.next_cursor !== null; ) {
        page = await search({ ...req, cursor: page.next_cursor });
        seen.push(...ids(page));
      }
      expect(new Set(seen).size).toBe(seen.length);
      const unchanged = Array.from({ length: 30 }, (_, i) => `q-${i}`).filter((id) => id !== replacedId);
      expect(unchanged.filter((id) => !seen.includes(id))).toEqual([]);
    });

    it('a malformed cursor → 422 at body.cursor', async () => {
      for (const cursor of ['!!not-a-cursor!!', Buffer.from('{"x":1}').toString('base64url')]) {
        const body = expectStatus(await post('/v1/search', { text: 'failed', datasets: ['ssh'], cursor }), 422);
        expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'cursor'] }));
      }
    });
  });

  describe('where', () => {
    it('eq', async () => {
      const env = await search({ datasets: ['events'], where: [{ field: 'level', op: 'eq', value: 'ERROR' }], limit: 100 });
      expect(env.total.value).toBe(count((e) => e.level === 'ERROR'));
      expect(ids(env).sort()).toEqual(idsWhere((e) => e.level === 'ERROR'));
      for (const r of env.records) expect(r.metadata.level).toBe('ERROR');
    });

    it('in', async () => {
      const env = await search({ datasets: ['events'], where: [{ field: 'service', op: 'in', value: ['api', 'db'] }], limit: 100 });
      expect(ids(env).sort()).toEqual(idsWhere((e) => e.service === 'api' || e.service === 'db'));
    });

    it('exists, true and false', async () => {
      const yes = await search({ datasets: ['events'], where: [{ field: 'user', op: 'exists', value: true }], limit: 100 });
      expect(ids(yes).sort()).toEqual(idsWhere((e) => 'user' in e));
      const no = await search({ datasets: ['events'], where: [{ field: 'user', op: 'exists', value: false }], limit: 100 });
      expect(ids(no).sort()).toEqual(idsWhere((e) => !('user' in e)));
    });

    it('several items combine with AND', async () => {
      const env = await search({
        datasets: ['events'],
        where: [
          { field: 'level', op: 'eq', value: 'INFO' },
          { field: 'service', op: 'eq', value: 'web' },
        ],
        limit: 100,
      });
      expect(ids(env).sort()).toEqual(idsWhere((e) => e.level === 'INFO' && e.service === 'web'));
    });

    it('a bad op → 422 located at body.where[0]', async () => {
      const body = expectStatus(await post('/v1/search', { datasets: ['events'], where: [{ field: 'level', op: 'like', value: 'x' }] }), 422);
      expect(body.detail.length).toBeGreaterThan(0);
      for (const d of body.detail) expect(d.loc.slice(0, 3)).toEqual(['body', 'where', 0]);
    });
  });

  describe('q', () => {
    it('field:value', async () => {
      const env = await search({ datasets: ['events'], q: 'level:ERROR', limit: 100 });
      expect(ids(env).sort()).toEqual(idsWhere((e) => e.level === 'ERROR'));
    });

    it('a phrase keeps word order; bare words do not', async () => {
      const phrase = await search({ datasets: ['events'], q: '"disk full"', limit: 100 });
      expect(ids(phrase).sort()).toEqual(idsWhere((e) => /disk full/.test(e.msg as string)));
      const words = await search({ datasets: ['events'], q: 'disk AND full', limit: 100 });
      expect(ids(words).sort()).toEqual(idsWhere((e) => /disk/.test(e.msg as string)));
      expect(words.total.value).toBeGreaterThan(phrase.total.value);
      // and over the real file
      const ssh = await search({ datasets: ['ssh'], q: '"failed password"', limit: 1 });
      expect(ssh.total.value).toBe(sshLines.filter((l) => /failed password/i.test(l)).length);
    });

    it('NOT', async () => {
      const env = await search({ datasets: ['events'], q: 'NOT level:INFO', limit: 100 });
      expect(ids(env).sort()).toEqual(idsWhere((e) => e.level !== 'INFO'));
      const ssh = await search({ datasets: ['ssh'], q: 'preauth NOT disconnect', limit: 1 });
      expect(ssh.total.value).toBe(sshLines.filter((l) => /preauth/i.test(l) && !/disconnect/i.test(l)).length);
    });

    it('a bad q → 422 at body.q', async () => {
      const body = expectStatus(await post('/v1/search', { datasets: ['events'], q: 'level:ERROR AND (' }), 422);
      expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'q'], msg: expect.any(String) }));
    });
  });

  describe('time', () => {
    it('time.last keeps only records within the duration', async () => {
      const env = await search({ datasets: ['events'], time: { last: '1h' }, limit: 100 });
      const expected = idsWhere((e) => now - Date.parse(e.timestamp as string) < 3_600_000);
      expect(expected).toHaveLength(6);
      expect(ids(env).sort()).toEqual(expected);
      for (const r of env.records) {
        expect(r.time).toBe(events.find((e) => e.id === r.id)!.timestamp);
        expect(Date.now() - Date.parse(r.time)).toBeLessThan(3_600_000);
      }
      const day = await search({ datasets: ['events'], time: { last: '24h' }, limit: 100 });
      expect(day.total.value).toBe(events.length);
    });
  });

  describe('aggregations', () => {
    it('terms on level, count, stats and date_histogram', async () => {
      const env = await search({
        datasets: ['events'],
        limit: 1,
        aggregations: [
          { name: 'levels', type: 'terms', field: 'level' },
          { name: 'n', type: 'count' },
          { name: 'latency', type: 'stats', field: 'latency_ms' },
          { name: 'per_hour', type: 'date_histogram', field: 'time', interval: '1h' },
        ],
      });
      expect(env.total.value).toBe(events.length);
      expect(env.records).toHaveLength(1);

      const levelCounts = new Map<string, number>();
      for (const e of events) levelCounts.set(e.level as string, (levelCounts.get(e.level as string) ?? 0) + 1);
      expect(env.aggregations.levels.buckets).toEqual(
        [...levelCounts].sort((a, b) => b[1] - a[1]).map(([key, doc_count]) => ({ key, doc_count })),
      );

      expect(env.aggregations.n).toEqual({ value: events.length });

      const lat = events.map((e) => e.latency_ms as number);
      const sum = lat.reduce((a, b) => a + b, 0);
      expect(env.aggregations.latency).toMatchObject({ count: lat.length, min: Math.min(...lat), max: Math.max(...lat) });
      expect(env.aggregations.latency.sum).toBeCloseTo(sum, 6);
      expect(env.aggregations.latency.avg).toBeCloseTo(sum / lat.length, 6);

      const hours = new Map<number, number>();
      for (const e of events) {
        const h = Math.floor(Date.parse(e.timestamp as string) / 3_600_000) * 3_600_000;
        hours.set(h, (hours.get(h) ?? 0) + 1);
      }
      const buckets = env.aggregations.per_hour.buckets;
      expect(buckets.map((b: Json) => ({ key: b.key, doc_count: b.doc_count }))).toEqual(
        [...hours].sort((a, b) => a[0] - b[0]).map(([key, doc_count]) => ({ key, doc_count })),
      );
      for (const b of buckets) expect(Date.parse(b.key_as_string)).toBe(b.key);
    });

    it('aggregate over the filtered hits only', async () => {
      const env = await search({ datasets: ['events'], where: [{ field: 'service', op: 'eq', value: 'db' }], aggregations: [{ name: 'n', type: 'count' }] });
      expect(env.aggregations.n).toEqual({ value: count((e) => e.service === 'db') });
    });
  });

  describe('collapse', () => {
    it('keeps the first record per value of the field', async () => {
      const full = await search({ datasets: ['events'], limit: 100 });
      const env = await search({ datasets: ['events'], collapse: { field: 'service' }, limit: 100 });
      expect(env.records.map((r: Json) => r.metadata.service).sort()).toEqual([...SERVICES].sort());
      const firstOf = new Map<string, string>();
      for (const r of full.records) if (!firstOf.has(r.metadata.service)) firstOf.set(r.metadata.service, r.id);
      expect(ids(env)).toEqual([...firstOf.values()]);
    });
  });

  describe('refusals', () => {
    it('an unknown dataset in datasets → 404 naming it', async () => {
      const body = expectStatus(await post('/v1/search', { text: 'x', datasets: ['ssh', 'no-such-ds'] }), 404);
      expect(body.detail).toContain('no-such-ds');
    });

    it('semantic: true → 409 on a dataset without vectors', async () => {
      await createDataset('no-vectors', { semantic: false });
      const body = expectStatus(await post('/v1/search', { text: 'failed password', datasets: ['no-vectors'], semantic: true }), 409);
      expect(body.detail).toBeTruthy();
    });

    it('an unknown member → 422', async () => {
      const body = expectStatus(await post('/v1/search', { text: 'x', datasets: ['ssh'], sort: 'time' }), 422);
      expect(body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'sort'] }));
    });

    it('out-of-range limit, bad duration and bad aggregation → 422 at the member', async () => {
      for (const [req, loc] of [
        [{ text: 'x', datasets: ['ssh'], limit: 0 }, ['body', 'limit']],
        [{ text: 'x', datasets: ['ssh'], limit: 1001 }, ['body', 'limit']],
        [{ datasets: ['events'], time: { last: 'soon' } }, ['body', 'time', 'last']],
        [{ datasets: ['events'], aggregations: [{ name: 'a', type: 'median', field: 'latency_ms' }] }, ['body', 'aggregations', 0, 'type']],
        [{ datasets: ['events'], aggregations: [{ name: 'a', type: 'date_histogram', field: 'time', interval: 'often' }] }, ['body', 'aggregations', 0, 'interval']],
      ] as const) {
        const body = expectStatus(await post('/v1/search', req), 422);
        expect(body.detail, JSON.stringify(req)).toContainEqual(expect.objectContaining({ loc }));
      }
    });
  });
});

describe('fields', () => {
  const nginx = readFileSync(nginxPath, 'utf8');
  const docs = nginx.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));

  beforeAll(async () => {
    await datasetWith('nginx', nginx, 'ndjson', 'application/x-ndjson');
  });

  it('lists nested paths such as connections.accepted with their type and count', async () => {
    expect(docs).toHaveLength(500);
    const body = expectStatus(await get('/v1/admin/fields?dataset_id=nginx'), 200);
    const byPath = new Map<string, Json>(body.fields.map((f: Json) => [f.field_path, f]));
    expect(byPath.get('connections.accepted')).toMatchObject({
      dataset_id: 'nginx',
      tenant_id: admin.tenant_id,
      field_path: 'connections.accepted',
      type: 'i64',
      seen_count: 500,
      indexed: expect.any(Boolean),
      stored: expect.any(Boolean),
      fast: expect.any(Boolean),
      variants: expect.any(Array),
    });
    expect(byPath.get('requests.total')).toMatchObject({ type: 'i64', seen_count: docs.filter((d) => d.requests?.total !== undefined).length });
    expect(byPath.get('nginx_version')).toMatchObject({ type: 'str', seen_count: 500 });
    for (const f of body.fields) expect(f.dataset_id).toBe('nginx');
  });

  it('prefix keeps only the paths under it', async () => {
    const body = expectStatus(await get('/v1/admin/fields?dataset_id=nginx&prefix=connections.'), 200);
    const expected = [...new Set(docs.flatMap((d) => Object.keys(d.connections).map((k) => `connections.${k}`)))].sort();
    expect(body.fields.map((f: Json) => f.field_path).sort()).toEqual(expected);
    for (const f of body.fields) expect(f.seen_count).toBe(docs.filter((d) => d.connections[f.field_path.split('.')[1]] !== undefined).length);
  });

  it('an unknown dataset → 404', async () => {
    expect(expectStatus(await get('/v1/admin/fields?dataset_id=no-such-ds'), 404).detail).toContain('no-such-ds');
  });
});

describe('unknown routes', () => {
  it('→ 404 {detail: "Not Found"}, with or without credentials', async () => {
    expect(expectStatus(await get('/v1/no-such-route'), 404)).toEqual({ detail: 'Not Found' });
    expect(expectStatus(await get('/no-such-route', { token: null, tenant: null }), 404)).toEqual({ detail: 'Not Found' });
    expect(expectStatus(await call('DELETE', '/v1/datasets'), 404)).toEqual({ detail: 'Not Found' });
  });
});

describe('local CLI through the running server', () => {
  it('svc search on the same data dir returns the records the HTTP search returns, in order', async () => {
    const http = await search({ text: 'failed password', datasets: ['ssh'] });
    const before = logLines().length;
    const r = svc(['search', 'failed password', '--dataset', 'ssh', '--output', 'json'], { dataDir: dir.path });
    expect(r.status, r.stderr).toBe(0);
    const cli = r.json();
    expect(ids(cli)).toEqual(ids(http));
    expect(cli.total).toEqual(http.total);
    // it went through the server, not around it
    const lines = await until('the CLI search in the request log', () => {
      const added = logLines().slice(before).map((l) => JSON.parse(l));
      return added.some((l) => l.url === '/v1/search') ? added : undefined;
    });
    expect(lines.find((l) => l.url === '/v1/search')).toMatchObject({ method: 'POST', status: 200, tenant: admin.tenant_id });
  });

  it('svc datasets list works too', () => {
    const r = svc(['datasets', 'list', '--output', 'json'], { dataDir: dir.path });
    expect(r.status, r.stderr).toBe(0);
    const ssh = r.json().datasets.find((d: Json) => d.dataset_id === 'ssh');
    expect(ssh).toMatchObject({ dataset_id: 'ssh', tenant_id: admin.tenant_id, record_count: 2000 });
  });
});

describe('request log', () => {
  it('one JSON line per request, and no line holds a bearer token', async () => {
    const marker = randomUUID();
    await get(`/healthz?probe=${marker}`, { token: null, tenant: null });
    await get(`/v1/datasets?probe=${marker}`);
    await get(`/v1/datasets?probe=${marker}`, { token: 'garbage-token-value' });
    // a token in a query string is a credential too
    await get(`/healthz?probe=${marker}&token=${admin.token}`, { token: null, tenant: null });

    const mine = await until('the probe requests in the log', () => {
      const found = logLines().filter((l) => l.includes(marker));
      return found.length >= 4 ? found : undefined;
    });
    await sleep(100); // a duplicate line, if any, would have arrived by now
    expect(logLines().filter((l) => l.includes(marker))).toHaveLength(4);
    const parsed = mine.map((l) => JSON.parse(l));
    expect(parsed.map((l) => l.status)).toEqual([200, 200, 401, 200]);
    expect(parsed[1]).toMatchObject({ method: 'GET', route: '/v1/datasets', tenant: admin.tenant_id, user: admin.user_id });

    const all = logLines();
    expect(all.length).toBeGreaterThan(50);
    for (const line of all) {
      const entry = JSON.parse(line);
      expect(entry).toMatchObject({ method: expect.any(String), url: expect.any(String), status: expect.any(Number) });
      expect(line).not.toContain(admin.token);
      expect(line).not.toContain('garbage-token-value');
    }
  });
});
