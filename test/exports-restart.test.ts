/**
 * An export job killed mid-way (SIGKILL of `svc serve`) is taken up again by the next server and
 * completes with a whole file: the rerun starts from scratch, freezes the search again and writes
 * every record once. SVC_EXPORT_BATCH_PAUSE_MS slows the first server so that the kill lands mid-export.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

const SCIFACT = join(DATA, 'scifact/corpus.jsonl');
const ids = readFileSync(SCIFACT, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => String(JSON.parse(l)._id));

let dir: ReturnType<typeof tempDir>;
let admin: { tenant_id: string; token: string };
let server: Server | undefined;

beforeAll(() => {
  dir = tempDir('svc-export-restart-');
  admin = init(dir.path);
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

it('an export killed mid-way completes after the restart, every record once', async () => {
  server = await serve(dir.path, { env: { SVC_EXPORT_BATCH_PAUSE_MS: '400' } });
  let api = client(server.url, { token: admin.token, tenant: admin.tenant_id });
  expectStatus(await api.post('/v1/admin/datasets', { dataset_id: 'scifact' }), 201);
  const ingested = svc(['ingest', 'scifact', SCIFACT, '--id-field', '_id', '--title-field', 'title', '--body-field', 'text', '--wait', '--output', 'json'], { dataDir: dir.path });
  expect(ingested.status, ingested.stderr).toBe(0);

  const created = expectStatus(await api.post('/v1/export', { search_request: { datasets: ['scifact'] }, format: 'ndjson' }), 202);
  const midway = await until('the export under way', async () => {
    const e = expectStatus(await api.get(`/v1/export/${created.export_id}`), 200);
    return e.status === 'running' && e.row_count >= 1000 ? e : undefined;
  });
  expect(midway.row_count).toBeLessThan(ids.length);
  const exited = new Promise((ok) => server!.proc.once('exit', ok));
  server.proc.kill('SIGKILL');
  await exited;
  const exportsDir = join(dir.path, 'blobs', admin.tenant_id, 'exports');
  expect(existsSync(exportsDir) ? readdirSync(exportsDir) : []).toEqual([]); // never half a file in place

  server = await serve(dir.path);
  api = client(server.url, { token: admin.token, tenant: admin.tenant_id });
  const done = await until('the export completed after the restart', async () => {
    const e = expectStatus(await api.get(`/v1/export/${created.export_id}`), 200);
    if (e.status === 'failed') throw new Error(e.error_message);
    return e.status === 'completed' ? e : undefined;
  });
  expect(done.row_count).toBe(ids.length);
  const res = await request(done.download_url);
  expect(res.statusCode).toBe(200);
  const lines = (await res.body.text()).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(ids.length);
  expect(new Set(lines.map((r) => r.id))).toEqual(new Set(ids));
  for (const r of lines) expect(r.provenance).toMatchObject({ dataset_id: 'scifact', line: expect.any(Number) });
  const job = expectStatus(await api.get(`/v1/admin/jobs/${created.job_id}`), 200);
  expect(job).toMatchObject({ status: 'succeeded', attempts: 2 });
  // the killed attempt's work folder went with the rerun
  expect(readdirSync(join(dir.path, 'blobs', admin.tenant_id, '.tmp')).filter((f) => f.startsWith('export_'))).toEqual([]);
});
