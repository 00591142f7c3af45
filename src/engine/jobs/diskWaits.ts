import type { FreeSpace } from '../diskSpace.js';
import { now } from '../ids.js';
import { SYSTEM, type Store } from '../store/db.js';
import type { JobState } from './queue.js';
import { keys } from '../store/keys.js';

/** Free space that must come back, beyond what there was when a job met a full disk, to try it again early. */
const WAKE_MARGIN_BYTES = 2 ** 20;

/**
 * The jobs of this process that wait for disk space. They come back on their own backoff, but
 * when space returns (someone deleted files) they are made due at once: a run waiting for space
 * resumes within a second or two of it being freed, and none is tried in a loop before.
 */
export class DiskWaits {
  private readonly waiting = new Map<string, { tenantId: string; dueMs: number }>();
  /** free bytes when the last of them met the full disk */
  private freeThen = 0;

  constructor(private readonly store: Store, private readonly space: FreeSpace) {}

  add(job: JobState, nextAttemptAt: string): void {
    this.waiting.set(job.job_id, { tenantId: job.tenant_id, dueMs: Date.parse(nextAttemptAt) });
    this.freeThen = this.space.measure(true).free;
  }

  /** Called on each tick of the queue: costs a map lookup, and a statfs a second while jobs wait. */
  async wakeIfSpace(): Promise<void> {
    if (this.waiting.size === 0) return;
    const { free, floor } = this.space.measure();
    if (free < floor || free < this.freeThen + WAKE_MARGIN_BYTES) return;
    const waiting = [...this.waiting];
    this.waiting.clear();
    await this.store.meta.transaction(() => {
      const at = now();
      for (const [jobId, { tenantId, dueMs }] of waiting) {
        const job: JobState | undefined = this.store.meta.get(keys.job(tenantId, jobId));
        if (job?.status !== 'pending' || Date.parse(job.next_attempt_at!) !== dueMs) continue; // run or changed meanwhile
        this.store.meta.remove(keys.jobQueue(SYSTEM, dueMs, jobId));
        this.store.meta.put(keys.job(tenantId, jobId), { ...job, next_attempt_at: at, updated_at: at });
        this.store.meta.put(keys.jobQueue(SYSTEM, Date.parse(at), jobId), tenantId);
      }
    });
  }
}
