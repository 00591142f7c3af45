/**
 * What detections promise across processes: a crash between the commit of a batch and the hits
 * it fires neither loses nor doubles a hit; a webhook receiver that is down gets the hit once it
 * is back; cron detections run as durable jobs on a real `svc serve`.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { DATA, init, serve, svcAsync, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, ingestStream, until, type Json } from './helpers/http.js';

const SSH = readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const FAILED = SSH.filter((l) => l.includes('Failed password')).length;
const dirs: { remove: () => void }[] = [];
afterAll(() => dirs.forEach((d) => d.remove()));

function fresh(): { path: string; admin: ReturnType<typeof init> } {
  const dir = tempDir('svc-detections-');
  dirs.push(dir);
  return { path: dir.path, admin: init(dir.path) };
}

const failedPasswords = (over: Json = {}): Json => ({
  name: 'failed passwords', severity: 'high', datasets: ['ssh'], query: { search_request: { q: '"Failed password"' } }, trigger: { on_ingest: true }, ...over,
});

/** A local HTTP receiver on `port` (0: any) that keeps what it was sent. */
async function receiver(port = 0): Promise<{ server: HttpServer; port: number; got: { headers: IncomingMessage['headers']; body: string }[] }> {
  const got: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return { server, port: (server.address() as AddressInfo).port, got };
}

describe('a crash between the commit of a batch and its hits', () => {
  it('neither loses nor doubles a hit', async () => {
    const { path } = fresh();
    let engine = await Engine.open(path);
    const caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'ssh' });
    const det = await engine.detections.create(caller, failedPasswords());
    await engine.close();

    const file = join(path, 'ssh.log');
    writeFileSync(file, SSH.join('\n') + '\n');
    // the ingest commits its batch, then dies just before the detection's hits are stored
    const crashed = await svcAsync(['ingest', 'ssh', file, '--format', 'text', '--wait'], { dataDir: path, env: { SVC_CRASH_AT: 'detections:evaluated' } });
    expect(crashed.status).toBe(-1); // killed at the crash point, not an error

    engine = await Engine.open(path, { background: true });
    try {
      const hits = await until('the hit, after the restart', () => {
        const h = engine.detections.hits(caller, det.detection_id).hits;
        return h.length > 0 ? h : undefined;
      });
      expect(engine.datasets.state(caller.tenant_id, 'ssh').seq).toBe(SSH.length); // the batch was committed before the crash
      await until('the interrupted run to end', () => (engine.jobs.list(caller.tenant_id, { type: 'ingest' }).every((j) => j.status === 'succeeded') ? true : undefined));
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ count: FAILED });
      expect(hits[0].records).toHaveLength(100);
    } finally {
      await engine.close();
    }
    engine = await Engine.open(path, { background: true });
    try {
      await new Promise((ok) => setTimeout(ok, 300)); // the catch-up on open has nothing left to do
      expect(engine.detections.hits(caller, det.detection_id).hits).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });
});

describe('on a running server', () => {
  let server: Server;
  let http: ReturnType<typeof client>;
  afterAll(async () => server?.stop());

  const ingest = (lines: string[]) => ingestStream(http, 'ssh', lines.join('\n') + '\n', 'text');

  it('a webhook receiver that is down gets the hit, signed, once it is back', async () => {
    const { path, admin } = fresh();
    server = await serve(path);
    http = client(server.url, { token: admin.token, tenant: admin.tenant_id });
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'ssh', semantic: false }), 201);

    const probe = await receiver();
    const port = probe.port;
    await new Promise((ok) => probe.server.close(ok)); // nothing listens there now
    const det = expectStatus(await http.post('/v1/admin/detections', failedPasswords({ actions: [{ type: 'webhook', url: `http://127.0.0.1:${port}/hook`, secret: 'hush' }] })), 201);

    await ingest(SSH.slice(0, 400)); // the run is ready while the receiver is down: delivery is not ingest's business
    const [hit] = expectStatus(await http.get(`/v1/detections/${det.detection_id}/hits`), 200).hits;
    expect(hit.count).toBe(SSH.slice(0, 400).filter((l) => l.includes('Failed password')).length);
    const failedOnce = await until('a failed delivery attempt', async () => {
      const jobs = expectStatus(await http.get('/v1/admin/jobs?type=detection_webhook'), 200).jobs;
      return jobs.find((j: Json) => j.attempts >= 1 && j.status === 'pending');
    });
    expect(failedOnce.payload).toEqual({ detection_id: det.detection_id, hit_id: hit.hit_id, action: 0, url: `http://127.0.0.1:${port}/hook` });

    const back = await receiver(port);
    try {
      const [delivery] = await until('the delivery', () => (back.got.length > 0 ? back.got : undefined), 20_000);
      expect(JSON.parse(delivery!.body)).toEqual(hit);
      expect(delivery!.headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', 'hush').update(delivery!.body).digest('hex')}`);
      expect(Number(delivery!.headers['x-svc-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 60);
      const job = await until('the job to succeed', async () => {
        const j = expectStatus(await http.get(`/v1/admin/jobs/${failedOnce.job_id}`), 200);
        return j.status === 'succeeded' ? j : undefined;
      });
      expect(job.attempts).toBeGreaterThanOrEqual(2);
      expect(back.got).toHaveLength(1);
    } finally {
      back.server.close();
    }
  });

  it('a cron detection covers the records since its previous run, one run at a time', async () => {
    // every second (croner reads six fields as seconds first)
    const det = expectStatus(await http.post('/v1/admin/detections', failedPasswords({ name: 'every second', trigger: { on_ingest: false, cron: '* * * * * *', timezone: 'Europe/Paris' } })), 201);
    expect(det.next_run_at).not.toBeNull();
    const before = SSH.slice(0, 400).filter((l) => l.includes('Failed password')).length;
    await ingest(SSH.slice(400, 800));
    const first = SSH.slice(400, 800).filter((l) => l.includes('Failed password')).length;
    const [hit] = await until('a scheduled hit', async () => {
      const h = expectStatus(await http.get(`/v1/detections/${det.detection_id}/hits`), 200).hits;
      return h.length > 0 ? h : undefined;
    });
    expect(hit.count).toBe(first); // the 400 lines ingested before the detection existed are not its business
    expect(before).toBeGreaterThan(0);
    await ingest(SSH.slice(800, 1200));
    const second = SSH.slice(800, 1200).filter((l) => l.includes('Failed password')).length;
    const hits = await until('a second scheduled hit', async () => {
      const h = expectStatus(await http.get(`/v1/detections/${det.detection_id}/hits`), 200).hits;
      return h.length > 1 ? h : undefined;
    });
    expect(hits.map((h: Json) => h.count).sort()).toEqual([first, second].sort());
    const got = expectStatus(await http.get(`/v1/admin/detections/${det.detection_id}`), 200);
    expect(got.last_run_at).not.toBeNull();
    // runs missed while no server ran come to one: one job waits for the next run, never a backlog
    const pending = expectStatus(await http.get('/v1/admin/jobs?type=detection_run&status=pending'), 200).jobs;
    expect(pending.filter((j: Json) => j.payload.detection_id === det.detection_id)).toHaveLength(1);
    // and the runs that ended do not pile up: the last one and the one before stay (a run may be going)
    await new Promise((ok) => setTimeout(ok, 3000));
    const all = expectStatus(await http.get('/v1/admin/jobs?type=detection_run&limit=500'), 200).jobs.filter((j: Json) => j.payload.detection_id === det.detection_id);
    expect(all.length).toBeLessThanOrEqual(3);
    expectStatus(await http.del(`/v1/admin/detections/${det.detection_id}`), 200);
  });

  it('a SQL detection runs on its schedule, binding $since and $until', async () => {
    const sqlRule = (name: string, sql: string): Json => ({ name, severity: 'medium', datasets: ['ssh'], trigger: { on_ingest: false, cron: '* * * * * *' }, query: { sql } });
    const noisy = expectStatus(await http.post('/v1/admin/detections', sqlRule('noisy addresses',
      "SELECT regexp_extract(_body, 'from ([0-9.]+)', 1) AS addr, count(*) AS n FROM ssh WHERE _body LIKE '%Failed password%' GROUP BY addr HAVING count(*) >= 20 ORDER BY n DESC")), 201);
    const dry = expectStatus(await http.post(`/v1/admin/detections/${noisy.detection_id}/test`, {}), 200);
    expect(dry.hits).toHaveLength(1);
    expect(dry.hits[0].count).toBe(dry.hits[0].records.length);
    expect(dry.hits[0].records[0].metadata).toMatchObject({ addr: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/), n: expect.any(Number) });
    expectStatus(await http.del(`/v1/admin/detections/${noisy.detection_id}`), 200);

    const bounds = expectStatus(await http.post('/v1/admin/detections', sqlRule('bounds', 'SELECT $since::TIMESTAMP AS since, $until::TIMESTAMP AS until')), 201);
    const [first, second] = await until('two scheduled runs', async () => {
      const h = expectStatus(await http.get(`/v1/detections/${bounds.detection_id}/hits`), 200).hits;
      return h.length > 1 ? [...h].reverse() : undefined;
    });
    for (const h of [first, second]) {
      expect(Date.parse(h.records[0].metadata.since)).toBe(Date.parse(h.window_start));
      expect(Date.parse(h.records[0].metadata.until)).toBe(Date.parse(h.window_end));
    }
    expect(second.window_start).toBe(first.window_end); // each run covers from the previous run's cutoff
    expectStatus(await http.del(`/v1/admin/detections/${bounds.detection_id}`), 200);
  });
});
