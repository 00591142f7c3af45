import type { Directory } from '../auth/directory.js';
import type { Datasets } from '../datasets/datasets.js';
import { deleteRecords } from '../deletion/records.js';
import type { JobQueue } from '../jobs/queue.js';
import { logProblem } from '../log.js';
import type { Sources } from '../sources/sources.js';
import { SYSTEM, type Store } from '../store/db.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';

const DAY_MS = 86_400_000;
export const RETENTION_EVERY_MS = 3600_000;

/**
 * A periodic job that deletes records older than their dataset's or source's `retention_days`
 * (by the record's own time, else when it was ingested), then runs the other sweeps. It re-enqueues itself.
 */
export class Retention {
  /** other upkeep that runs with each retention pass, each on its own: expired views, old export files, stale temp files */
  readonly sweeps: ((nowMs: number) => Promise<void>)[] = [];

  constructor(
    private readonly store: Store,
    private readonly jobs: JobQueue,
    private readonly directory: Directory,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly derived: DerivedIndexes,
  ) {
    jobs.register('retention', { handler: () => this.run(), maxAttempts: 3, background: true, freesSpace: true });
  }

  /** Makes sure one retention job is waiting. */
  async schedule(dueMs = Date.now()): Promise<void> {
    if (this.jobs.list(SYSTEM, { type: 'retention', status: 'pending', limit: 1 }).length === 0) await this.jobs.enqueue(SYSTEM, 'retention', {}, dueMs);
  }

  /** Applies every retention rule now; returns the records deleted per tenant and dataset. */
  async run(nowMs = Date.now()): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const { tenant_id: t } of this.directory.tenants()) {
      for (const d of this.datasets.ids(t)) {
        const ds = this.datasets.state(t, d);
        if (ds.deleting) continue;
        const rules = this.sources.ofDataset(t, d).map((s) => ({ key: s.source_key, days: s.retention_days ?? ds.retention_days }));
        if (!rules.some((r) => r.days)) continue;
        const cutoff = new Map(rules.filter((r) => r.days).map((r) => [r.key, nowMs - r.days! * DAY_MS]));
        const byKey = await deleteRecords(this.store, this.derived, t, d, (rec) => {
          const limit = cutoff.get(rec.source_key);
          return limit !== undefined && Date.parse(rec.time ?? rec.created_at) < limit;
        });
        const n = [...byKey.values()].reduce((a, b) => a + b, 0);
        if (n > 0) {
          deleted[`${t}/${d}`] = n;
          await this.derived.snapshot(t, d); // optional: the tombstones cover the deleted records
        }
      }
    }
    for (const sweep of this.sweeps) {
      try {
        await sweep(nowMs);
      } catch (err) {
        logProblem('retention_sweep_failed', err); // the other sweeps and the next pass still run
      }
    }
    await this.schedule(nowMs + RETENTION_EVERY_MS);
    return deleted;
  }
}
