import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

// lmdb-js grows its map as it needs; SVC_LMDB_MAP_SIZE caps the store, which then fails as a full map would
const SMALL = { SVC_LMDB_MAP_SIZE: String(3 * 2 ** 20), SVC_MIN_FREE_BYTES: '0' };
const LARGE = { SVC_LMDB_MAP_SIZE: String(256 * 2 ** 20), SVC_MIN_FREE_BYTES: '0' };
const LINES = 16_000;
const id = (n: number) => `id${String(n).padStart(7, '0')}`;
const line = (n: number) => `2026-11-22T08:00:00Z WARN node-${n % 13} slow request ${id(n)} took ${n % 5000} ms`;

describe('an LMDB store whose map is full', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let who: ReturnType<typeof init>;
  const api = () => client(server.url, { token: who.token, tenant: who.tenant_id });

  beforeAll(async () => {
    who = init(dataDir);
    server = await serve(dataDir, { env: SMALL });
  });
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('fails the run as disk_full, keeps serving reads, and finishes the run once the map is larger', async () => {
    expectStatus(await api().post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
    const body = Array.from({ length: LINES }, (_, i) => line(i + 1)).join('\n');
    const accepted = expectStatus(await api().call('POST', '/v1/ingest/sources/logs/stream?format=text', { body, contentType: 'text/plain' }), 202);
    const runId = accepted.ingest_run_id;

    const failed = await until('the run to stop', async () => {
      const run = (await api().get(`/v1/ingest/runs/${runId}`)).body;
      return run.status === 'failed' || run.status === 'ready' ? run : undefined;
    });
    expect(failed).toMatchObject({ status: 'failed', error_code: 'disk_full', lifecycle: { repairable: true } });
    expect(failed.error_message).toMatch(/disk is full.*MDB_MAP_FULL/);
    const committed = failed.documents.parsed;
    expect(committed).toBeGreaterThan(0);
    expect(committed).toBeLessThan(LINES);

    // reads go on: the run, the dataset, a search over what was committed
    expect(server.proc.exitCode).toBeNull();
    expectStatus(await api().get('/healthz'), 200);
    expect(expectStatus(await api().get(`/v1/ingest/runs/${runId}`), 200).error_code).toBe('disk_full');
    const found = expectStatus(await api().post('/v1/search', { text: id(1), datasets: ['logs'], max_expansion_terms: 0 }), 200);
    expect(found.total.value).toBe(1);
    // writes are refused with 507 and say why
    const refused = await api().post('/v1/admin/datasets', { dataset_id: 'more' });
    expect(refused.status).toBe(507);
    expect(refused.body.detail).toMatchObject({ code: 'disk_full', message: expect.stringMatching(/disk is full/) });
    expect((await api().call('POST', '/v1/ingest/sources/logs/stream?format=text', { body: line(1), contentType: 'text/plain' })).status).toBe(507);
    expect(server.proc.exitCode).toBeNull();

    await server.stop();
    expect(server.proc.exitCode).toBe(0);
    server = await serve(dataDir, { env: LARGE });
    const ready = await until('the run to resume and finish', async () => {
      const run = (await api().get(`/v1/ingest/runs/${runId}`)).body;
      return run.status === 'ready' ? run : undefined;
    }, 60_000);
    expect(ready.documents).toMatchObject({ parsed: LINES, duplicates: 0, malformed: 0 });
    expect(expectStatus(await api().get('/v1/datasets/logs'), 200).record_count).toBe(LINES);
    for (const n of [1, committed, committed + 1, LINES]) {
      const hit = expectStatus(await api().post('/v1/search', { text: id(n), datasets: ['logs'], max_expansion_terms: 0 }), 200);
      expect(hit.total.value, `line ${n}`).toBe(1);
      expect(hit.records[0].provenance.line).toBe(n);
    }
  }, 120_000);
});
