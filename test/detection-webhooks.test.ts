import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { Hit } from '../src/api/detections.js';
import type { StoredDetection } from '../src/engine/detections/stored.js';
import { WEBHOOK_JOB, Webhooks } from '../src/engine/detections/webhooks.js';
import { Engine } from '../src/engine/index.js';
import type { JobState } from '../src/engine/jobs/queue.js';
import type { Store } from '../src/engine/store/db.js';
import { keys } from '../src/engine/store/keys.js';
import { tempDir } from './helpers/cli.js';

const SECRET = 'whsec-test-7f3a';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server-like engine (it takes background jobs) with webhook delivery on its queue. */
async function fresh() {
  const dir = tempDir();
  cleanups.push(() => dir.remove());
  const engine = await Engine.open(join(dir.path, 'data'), { background: true });
  cleanups.push(() => engine.close({ drain: false }));
  await engine.init('acme', 'admin@acme.test');
  const t = engine.localCaller().tenant_id;
  const store: Store = (engine as any).store;
  const webhooks = new Webhooks(store, engine.jobs, { timeoutMs: 2000 });
  return { engine, t, store, webhooks };
}

/** A loopback port nothing listens on (for now). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const { port } = s.address() as AddressInfo;
  await new Promise((ok) => s.close(ok));
  return port;
}

interface Received { headers: IncomingHttpHeaders; body: Buffer }

/** A receiver on `port` answering with `statuses` in turn (the last one from then on). */
async function receiver(port: number, statuses: number[] = [200]): Promise<{ got: Received[]; server: Server }> {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.statusCode = statuses[Math.min(got.length, statuses.length) - 1];
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  cleanups.push(() => new Promise((ok) => server.close(() => ok())));
  return { got, server };
}

function detection(t: string, port: number): StoredDetection {
  const at = new Date().toISOString();
  return {
    detection_id: 'det_webhook_test', tenant_id: t, name: 'failed logins', description: null, severity: 'high', enabled: true,
    datasets: ['auth'], query: { search_request: { query: 'failed' } as any }, trigger: { on_ingest: true }, threshold: null,
    actions: [{ type: 'webhook', url: `http://127.0.0.1:${port}/hook?src=svc`, secret: SECRET }],
    created_at: at, updated_at: at, version: 1,
  };
}

function hit(det: StoredDetection): Hit {
  const at = new Date().toISOString();
  const record = { id: 'r1', title: null, body: 'failed login for ünïcødé user 👤', metadata: { ip: '10.0.0.1' }, score: 1, score_kind: 'bm25', snippets: [], created_at: at, time: at, provenance: { dataset_id: 'auth' } };
  return {
    hit_id: 'hit_01webhooktest', detection_id: det.detection_id, severity: det.severity, triggered_at: at, group_value: null,
    count: 1, window_start: at, window_end: at, records: [record as unknown as Hit['records'][number]],
  };
}

/** Stores the detection and its hit and stages the deliveries, in one transaction, as a detection run does. */
function fire(ctx: Awaited<ReturnType<typeof fresh>>, det: StoredDetection, h: Hit): JobState {
  ctx.store.meta.transactionSync(() => {
    ctx.store.meta.put(keys.detection(ctx.t, det.detection_id), det);
    ctx.store.meta.put(keys.hit(ctx.t, det.detection_id, h.hit_id), h);
    ctx.webhooks.stage(ctx.t, det, h);
  });
  const jobs = ctx.engine.jobs.list(ctx.t, { type: WEBHOOK_JOB });
  expect(jobs).toHaveLength(1);
  return jobs[0];
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('webhook deliveries', () => {
  it('retries while nobody listens, then posts the exact hit, signed', async () => {
    const ctx = await fresh();
    const port = await freePort();
    const det = detection(ctx.t, port);
    const h = hit(det);
    const staged = fire(ctx, det, h);
    // the payload names the delivery, never the secret (jobs are readable through the API)
    expect(staged.payload).toEqual({ detection_id: det.detection_id, hit_id: h.hit_id, action: 0, url: det.actions[0].url });
    expect(JSON.stringify(staged)).not.toContain(SECRET);
    expect(staged.max_attempts).toBe(12);
    ctx.engine.jobs.poke();

    const failed = await until('a failed attempt', () => {
      const j = ctx.engine.jobs.get(ctx.t, staged.job_id);
      return j.status === 'pending' && j.attempts === 1 && j;
    });
    expect(failed.error_message).toMatch(/unreachable: ECONNREFUSED/);
    expect(Date.parse(failed.next_attempt_at!)).toBeGreaterThan(Date.parse(failed.started_at!));

    const { got } = await receiver(port);
    const done = await until('the delivery', () => {
      const j = ctx.engine.jobs.get(ctx.t, staged.job_id);
      return j.status === 'succeeded' && j;
    });
    expect(done.result).toEqual({ status: 200 });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(got).toHaveLength(1);
    const [{ headers, body }] = got;
    expect(body.toString('utf8')).toBe(JSON.stringify(h));
    expect(JSON.parse(body.toString('utf8'))).toEqual(h);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('svc');
    expect(headers['x-svc-hit-id']).toBe(h.hit_id);
    expect(headers['x-svc-delivery']).toBe(staged.job_id);
    const ts = Number(headers['x-svc-timestamp']);
    expect(Number.isInteger(ts)).toBe(true);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);
    expect(headers['x-svc-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`);
  }, 30_000);

  it('retries a receiver that answers 500, and sends no signature without a secret', async () => {
    const ctx = await fresh();
    const port = await freePort();
    const { got } = await receiver(port, [500, 200]);
    const det = detection(ctx.t, port);
    det.actions[0].secret = null;
    const staged = fire(ctx, det, hit(det));
    ctx.engine.jobs.poke();
    const done = await ctx.engine.jobs.settled(ctx.t, staged.job_id);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, result: { status: 200 } });
    expect(got).toHaveLength(2);
    // a retry is the same delivery: a receiver can tell the two apart from a new one
    expect(got.map((r) => r.headers['x-svc-delivery'])).toEqual([staged.job_id, staged.job_id]);
    expect(got[1].body.equals(got[0].body)).toBe(true);
    expect(got[0].headers['x-svc-signature']).toBeUndefined();
  }, 30_000);

  it('a detection deleted before delivery ends the job failed, without a request', async () => {
    const ctx = await fresh();
    const port = await freePort();
    const { got } = await receiver(port);
    const det = detection(ctx.t, port);
    const staged = fire(ctx, det, hit(det));
    ctx.store.meta.transactionSync(() => ctx.store.meta.remove(keys.detection(ctx.t, det.detection_id)));
    ctx.engine.jobs.poke();
    const done = await ctx.engine.jobs.settled(ctx.t, staged.job_id);
    expect(done).toMatchObject({ status: 'failed', attempts: 1 });
    expect(done.error_message).toContain(`detection '${det.detection_id}'`);
    await sleep(200);
    expect(got).toHaveLength(0);
  }, 30_000);
});
