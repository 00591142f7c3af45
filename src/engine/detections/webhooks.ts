import { createHmac } from 'node:crypto';
import { Permanent, type JobQueue, type JobState } from '../jobs/queue.js';
import type { Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { materialize, type StoredHit } from './hits.js';
import type { StoredDetection } from './stored.js';

export const WEBHOOK_JOB = 'detection_webhook';

const DEFAULT_TIMEOUT_MS = 10_000;
/** With the queue's backoff (1 s doubling, at most 5 min) the 11 waits add up to about 18.5 min: how long a receiver has to come back. */
const MAX_ATTEMPTS = 12;

/** What a delivery job carries: job payloads are readable through the jobs API, so never the secret. */
interface DeliveryPayload {
  detection_id: string;
  hit_id: string;
  action: number;
  url: string;
}

/** `sha256=<hex>`: the HMAC-SHA256 of the exact body bytes, what a receiver recomputes to trust a delivery. */
export const signature = (secret: string, body: Buffer | string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * Posts each hit to its detection's webhooks, one durable job per action, so that a receiver
 * that is down gets the hit once it is back (retried with the queue's backoff, then `failed`).
 */
export class Webhooks {
  private readonly timeoutMs: number;

  constructor(private readonly store: Store, private readonly jobs: JobQueue, opts: { timeoutMs?: number } = {}) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // only a long-running process delivers: a local command that stores a hit leaves it to the server
    jobs.register(WEBHOOK_JOB, { handler: (job) => this.deliver(job), maxAttempts: MAX_ATTEMPTS, background: true });
  }

  /**
   * Stages one delivery per webhook action, inside the caller's transaction (the one that stores
   * the hit): the deliveries exist exactly when the hit does. The caller pokes the queue after commit.
   */
  stage(t: string, det: StoredDetection, hit: { hit_id: string }): void {
    det.actions.forEach((a, i) => {
      if (a.type !== 'webhook') return;
      const payload: DeliveryPayload = { detection_id: det.detection_id, hit_id: hit.hit_id, action: i, url: a.url };
      this.jobs.stage(t, WEBHOOK_JOB, { ...payload });
    });
  }

  /** One attempt: the hit and the action are read now, so a deleted detection or hit sends nothing. */
  private async deliver(job: JobState): Promise<Record<string, unknown>> {
    const t = job.tenant_id;
    const p = job.payload as unknown as DeliveryPayload;
    const det: StoredDetection | undefined = this.store.meta.get(keys.detection(t, p.detection_id));
    if (!det) throw new Permanent(`detection '${p.detection_id}' no longer exists: nothing to deliver`);
    const stored: StoredHit | undefined = this.store.meta.get(keys.hit(t, p.detection_id, p.hit_id));
    if (!stored) throw new Permanent(`hit '${p.hit_id}' no longer exists: nothing to deliver`);
    const action = det.actions[p.action];
    // the detection was edited meanwhile: its actions are no longer the ones the hit was staged for
    if (action?.type !== 'webhook' || action.url !== p.url) throw new Permanent(`webhook action ${p.action} of detection '${p.detection_id}' no longer posts to ${p.url}`);

    const hit = materialize(this.store, t, stored);
    const body = Buffer.from(JSON.stringify(hit));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'svc',
      'x-svc-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-svc-hit-id': hit.hit_id,
      'x-svc-delivery': job.job_id,
    };
    if (action.secret) headers['x-svc-signature'] = signature(action.secret, body);

    let status: number;
    try {
      // loaded on first delivery: every command that opens the engine would otherwise pay for it
      const { request } = await import('undici');
      const res = await request(action.url, { method: 'POST', headers, body, headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
      status = res.statusCode;
      // an unread body holds the connection open
      await res.body.dump();
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
      const cause = e.code ?? e.cause?.code ?? e.cause?.message ?? e.message;
      throw new Error(`webhook ${action.url} unreachable: ${cause}`);
    }
    if (status < 200 || status >= 300) throw new Error(`webhook ${action.url} answered ${status}`);
    return { status };
  }
}
