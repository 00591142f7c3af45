import type { DerivedIndexes } from '../src/engine/derived/derivedIndexes.js';
import { TextIndexes } from '../src/engine/text/textIndexes.js';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { deleteRecords } from '../src/engine/deletion/records.js';
import { Interrupted, Permanent, type JobState } from '../src/engine/jobs/queue.js';
import { openStore } from '../src/engine/store/db.js';
import { tempDir } from './helpers/cli.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

async function fresh(): Promise<{ engine: Engine; dataDir: string }> {
  const dir = tempDir();
  dirs.push(dir);
  const dataDir = join(dir.path, 'data');
  const engine = await Engine.open(dataDir);
  try {
    await engine.init('acme', 'admin@acme.test');
  } catch (err) {
    await engine.close();
    throw err;
  }
  return { engine, dataDir };
}
const lines = (rows: object[]) => Readable.from([Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'))]);

describe('the job queue', () => {
  it('retries a failing job with backoff, then fails it; a Permanent error fails at once', async () => {
    const { engine } = await fresh();
    try {
      const t = engine.localCaller().tenant_id;
      const seen: number[] = [];
      engine.jobs.register('flaky', {
        maxAttempts: 3,
        handler: async (job) => {
          seen.push(Date.now());
          if (job.attempts < 2) throw new Error('not yet');
          return { ok: job.attempts };
        },
      });
      engine.jobs.register('doomed', { handler: async () => { throw new Permanent('never'); } });
      const flaky = await engine.jobs.enqueue(t, 'flaky', {});
      const doomed = await engine.jobs.enqueue(t, 'doomed', {});
      const ok = await engine.jobs.settled(t, flaky.job_id);
      expect(ok).toMatchObject({ status: 'succeeded', attempts: 2, result: { ok: 2 }, error_message: null });
      expect(seen[1] - seen[0]).toBeGreaterThanOrEqual(900); // the first retry waited about a second
      expect(await engine.jobs.settled(t, doomed.job_id)).toMatchObject({ status: 'failed', attempts: 1, error_message: 'never' });
      expect(engine.jobs.list(t, { type: 'doomed' }).map((j) => j.job_id)).toEqual([doomed.job_id]);
    } finally {
      await engine.close();
    }
  });

  it('a job interrupted by a stopping process waits for the next start without using up an attempt', async () => {
    const { engine } = await fresh();
    try {
      const t = engine.localCaller().tenant_id;
      let runs = 0;
      // one attempt only: an interruption that counted would fail it
      engine.jobs.register('long', { maxAttempts: 1, handler: async () => (++runs < 4 ? Promise.reject(new Interrupted('stopping')) : { runs }) });
      const job = await engine.jobs.enqueue(t, 'long', {});
      expect(await engine.jobs.settled(t, job.job_id)).toMatchObject({ status: 'succeeded', attempts: 1, result: { runs: 4 } });
    } finally {
      await engine.close();
    }
  });

  it('cancels a pending job, and refuses to cancel an ended one', async () => {
    const { engine } = await fresh();
    try {
      const t = engine.localCaller().tenant_id;
      engine.jobs.register('later', { handler: async () => ({}) });
      const job = await engine.jobs.enqueue(t, 'later', {}, Date.now() + 3600_000);
      expect((await engine.jobs.cancel(t, job.job_id)).status).toBe('cancelled');
      await expect(engine.jobs.cancel(t, job.job_id)).rejects.toThrow(/already ended/);
    } finally {
      await engine.close();
    }
  });

  it('stops a running job whose record went with its tenant', async () => {
    const { engine, dataDir } = await fresh();
    try {
      const t = engine.localCaller().tenant_id;
      let started!: () => void;
      let stopped!: () => void;
      const running = new Promise<void>((ok) => (started = ok));
      const ended = new Promise<void>((ok) => (stopped = ok));
      engine.jobs.register('long', {
        handler: async (_job, ctx) => {
          started();
          while (!ctx.cancelled()) await sleep(20);
          stopped();
        },
      });
      const job = await engine.jobs.enqueue(t, 'long', {});
      await running;
      await openStore(dataDir).meta.remove([t, 'job', job.job_id]);
      await ended; // a handler that never learns it should stop keeps this test waiting until it fails
    } finally {
      await engine.close();
    }
  });

  it('takes up a job left running by a process that died', async () => {
    const { engine, dataDir } = await fresh();
    const t = engine.localCaller().tenant_id;
    let job: JobState;
    try {
      job = await engine.jobs.enqueue(t, 'orphan', { n: 1 }, Date.now() + 3600_000);
    } finally {
      await engine.close({ drain: false });
    }
    // as a crashed worker leaves it: running, leased by someone else, out of the queue
    const store = openStore(dataDir);
    await store.meta.transaction(() => {
      for (const { key } of store.meta.getRange({ start: ['~', 'jobq'], end: ['~', 'jobq', '\uffff'] })) store.meta.remove(key);
      store.meta.put([t, 'job', job.job_id], { ...job, status: 'running', attempts: 1, lease_owner: 'worker_dead', lease_expires_at: new Date().toISOString() });
    });
    await store.close();
    const again = await Engine.open(dataDir);
    try {
      again.jobs.register('orphan', { handler: async (j) => ({ resumed: j.payload.n }) });
      await again.jobs.start();
      expect(await again.jobs.settled(t, job.job_id)).toMatchObject({ status: 'succeeded', attempts: 2, result: { resumed: 1 } });
    } finally {
      await again.close();
    }
  });
});

describe('tombstones and retention', () => {
  it('a record deleted after the index snapshot was written stays deleted when the index is reopened', async () => {
    const { engine, dataDir } = await fresh();
    const caller = engine.localCaller();
    try {
      await engine.datasets.create(caller, { dataset_id: 'logs' });
      const run = await engine.ingest.submit(caller, lines([{ id: 'a', msg: 'zebra one' }, { id: 'b', msg: 'zebra two' }]), { dataset_id: 'logs', format: 'ndjson' });
      await engine.ingest.wait(caller, run.ingest_run_id);
    } finally {
      await engine.close(); // writes the snapshot holding both
    }
    const store = openStore(dataDir);
    // as if the process died before touching the index: only the tombstones, written with the deletion, are there
    const text = new TextIndexes(store, dataDir, () => ({ text_fields: [] }), 100_000);
    const died = { deleting: (t: string, d: string, seqs: number[]) => text.deleting(t, d, seqs), removed: async () => {} } as unknown as DerivedIndexes;
    await deleteRecords(store, died, caller.tenant_id, 'logs', (rec) => rec.id === 'a');
    await store.close();
    const again = await Engine.open(dataDir);
    try {
      const found = await again.search.run(again.localCaller(), { text: 'zebra', datasets: ['logs'] });
      expect(found.records.map((r) => r.id)).toEqual(['b']);
      expect(found.total.value).toBe(1);
      expect(again.datasets.get(again.localCaller(), 'logs').record_count).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('deletes records older than retention_days by their time, and keeps the rest', async () => {
    const { engine } = await fresh();
    try {
      const caller = engine.localCaller();
      await engine.datasets.create(caller, { dataset_id: 'events', retention_days: 2 });
      const day = 86_400_000;
      const rows = [0, 1, 3, 5].map((age) => ({ id: `d${age}`, msg: `event ${age} days old`, timestamp: new Date(Date.now() - age * day - 60_000).toISOString() }));
      const run = await engine.ingest.submit(caller, lines(rows), { dataset_id: 'events', format: 'ndjson' });
      await engine.ingest.wait(caller, run.ingest_run_id);
      const deleted = await engine.retention.run();
      expect(Object.values(deleted)).toEqual([2]);
      const left = await engine.search.run(caller, { datasets: ['events'], limit: 10 });
      expect(left.records.map((r) => r.id).sort()).toEqual(['d0', 'd1']);
      expect((await engine.search.run(caller, { text: 'event', datasets: ['events'] })).total.value).toBe(2);
      expect(engine.jobs.list('~', { type: 'retention', status: 'pending' })).toHaveLength(1);
    } finally {
      await engine.close();
    }
  });
});
