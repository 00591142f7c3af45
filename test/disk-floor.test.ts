import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus } from './helpers/http.js';

// a floor above any disk's free space: every ingest meets it
const FLOOR_ABOVE_FREE = { SVC_MIN_FREE_BYTES: String(2 ** 60) };

describe('the free-space floor', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let who: ReturnType<typeof init>;
  const api = () => client(server.url, { token: who.token, tenant: who.tenant_id });
  const refusedForSpace = (res: { status: number; body: any; text: string }) => {
    expect(res.status, res.text).toBe(507);
    expect(res.body.detail).toMatchObject({ code: 'disk_full', message: expect.stringMatching(/nearly full.*MiB free, below the .* MiB svc keeps free/) });
  };

  beforeAll(async () => {
    who = init(dataDir);
    server = await serve(dataDir, { env: FLOOR_ABOVE_FREE });
  });
  afterAll(async () => {
    await server.stop();
    dir.remove();
  });

  it('refuses streams, upload parts and completes with 507 while reads go on', async () => {
    expectStatus(await api().post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
    refusedForSpace(await api().call('POST', '/v1/ingest/sources/logs/stream?format=text', { body: 'a line\nanother line\n', contentType: 'text/plain' }));

    const session = expectStatus(await api().post('/v1/ingest/sources/logs/uploads', { filename: 'a.log' }), 201);
    const [part] = expectStatus(await api().post('/v1/ingest/sources/logs/uploads/parts', { upload_session_id: session.upload_session_id, part_numbers: [1] }), 200).parts;
    refusedForSpace(await api().call('PUT', part.upload_url, { body: Buffer.alloc(256 * 1024, 'x'), token: null, tenant: null }));
    refusedForSpace(await api().post('/v1/ingest/sources/logs/uploads/complete', { upload_session_id: session.upload_session_id, parts: [{ part_number: 1, etag: 'x' }] }));

    expect(server.proc.exitCode).toBeNull();
    expectStatus(await api().get('/healthz'), 200);
    expect(expectStatus(await api().get('/v1/datasets/logs'), 200).record_count).toBe(0);
    expect(expectStatus(await api().post('/v1/search', { text: 'line', datasets: ['logs'] }), 200).total.value).toBe(0);
    expect(expectStatus(await api().get('/v1/ingest/runs'), 200).runs).toEqual([]);
  });

  it('refuses a local ingest too, and lets it through once the floor is below the free space', async () => {
    await server.stop();
    const file = join(dir.path, 'a.log');
    writeFileSync(file, 'a line\nanother line\n');
    const refused = svc(['ingest', 'logs', file, '--wait'], { dataDir, env: FLOOR_ABOVE_FREE });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/disk is nearly full/);
    const ok = svc(['ingest', 'logs', file, '--wait', '--output', 'json'], { dataDir, env: { SVC_MIN_FREE_BYTES: '0' } });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.json()).toMatchObject({ status: 'ready', documents: { parsed: 2 } });
  });
});
