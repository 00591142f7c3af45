import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, tempDir, type Server } from './helpers/cli.js';
import { client, until } from './helpers/http.js';

const LINES = 120_000;
const line = (n: number) => `2026-11-22T08:00:00Z WARN node-${n % 13} slow request id${String(n).padStart(7, '0')} took ${n % 5000} ms`;

describe('a server killed with SIGKILL while an ingest job runs', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let who: ReturnType<typeof init>;

  beforeAll(async () => {
    who = init(dataDir);
    server = await serve(dataDir);
  });
  afterAll(async () => {
    await server.stop();
    dir.remove();
  });

  it('resumes the run on restart: nothing lost, nothing twice', async () => {
    let api = client(server.url, { token: who.token, tenant: who.tenant_id });
    expect((await api.post('/v1/admin/datasets', { dataset_id: 'big' })).status).toBe(201);
    const body = Array.from({ length: LINES }, (_, i) => line(i + 1)).join('\n');
    const accepted = await api.call('POST', '/v1/ingest/sources/big/stream?format=text', { body, headers: { 'content-type': 'text/plain' } });
    expect(accepted.status).toBe(202);
    const runId = accepted.body.ingest_run_id;
    await until('the run to be under way', async () => {
      const run = (await api.get(`/v1/ingest/runs/${runId}`)).body;
      return run.status === 'running' && run.documents.parsed > 0 ? run : undefined;
    });
    server.proc.kill('SIGKILL');
    await new Promise((ok) => server.proc.once('exit', ok));

    server = await serve(dataDir);
    api = client(server.url, { token: who.token, tenant: who.tenant_id });
    const run = await until('the run to end', async () => {
      const r = (await api.get(`/v1/ingest/runs/${runId}`)).body;
      return r.status === 'ready' || r.status === 'failed' ? r : undefined;
    }, 120_000);
    expect(run).toMatchObject({ status: 'ready', documents: { expected: LINES, parsed: LINES, duplicates: 0, malformed: 0 } });
    expect((await api.get('/v1/datasets/big')).body.record_count).toBe(LINES);
    for (const n of [1, 2001, 60_000, LINES]) {
      const found = (await api.post('/v1/search', { text: `id${String(n).padStart(7, '0')}`, datasets: ['big'], max_expansion_terms: 0 })).body;
      expect(found.total.value, `line ${n}`).toBe(1);
      expect(found.records[0].provenance.line).toBe(n);
    }
    expect((await api.post('/v1/search', { text: 'slow', datasets: ['big'], limit: 1 })).body.total.value).toBe(LINES);
    const jobs = (await api.get('/v1/admin/jobs?type=ingest')).body.jobs;
    expect(jobs[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  }, 180_000);
});
