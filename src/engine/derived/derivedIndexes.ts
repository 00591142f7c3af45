import { rmSync } from 'node:fs';
import type { RunState } from '../ingest/runs.js';
import { layout } from '../layout.js';
import { logProblem } from '../log.js';
import type { StoredRecord } from '../records.js';
import type { DerivedIndex, IndexName, RecordFollower, RemovalListener } from './derivedIndex.js';

/**
 * The derived indexes of a data dir in one list, in the order they follow ingest (text first: a
 * run is searchable as soon as its text is). A new index plugs in by implementing DerivedIndex and
 * joining the list in Engine.
 */
export class DerivedIndexes {
  /** what else loses deleted records (views): registered on this instance, never module-wide */
  private readonly listeners: RemovalListener[] = [];
  /** what else acts on new records, after the indexes took them (detections) */
  private readonly followers: RecordFollower[] = [];

  constructor(
    readonly all: readonly DerivedIndex[],
    private readonly dataDir: string,
  ) {}

  get(name: IndexName): DerivedIndex {
    return this.all.find((i) => i.name === name)!;
  }

  onRemoved(listener: RemovalListener): void {
    this.listeners.push(listener);
  }

  onAdded(follower: RecordFollower): void {
    this.followers.push(follower);
  }

  async added(t: string, d: string, records: StoredRecord[]): Promise<void> {
    for (const index of this.all) await index.added(t, d, records);
    for (const f of this.followers) await f.added(t, d, records);
  }

  async follow(run: RunState, save: () => void): Promise<void> {
    for (const index of this.all) await index.follow(run, save);
    for (const f of this.followers) await f.catchUp(run.tenant_id, run.dataset_id);
  }

  /** Brings every index up to the store; a failure is logged, and the next ingest or open tries again. */
  async catchUp(t: string, d: string): Promise<void> {
    for (const index of this.all) await index.catchUp(t, d).catch((err) => logProblem(`${index.name}_catch_up_failed`, err, { tenant_id: t, dataset_id: d }));
  }

  deleting(t: string, d: string, seqs: number[]): void {
    for (const index of this.all) index.deleting(t, d, seqs);
  }

  /** Every index and listener hears of the batch, even when one fails (a retry would not find those records again); the first failure is thrown after. */
  async removed(t: string, d: string, seqs: number[], ids: string[]): Promise<void> {
    let failed: unknown = null;
    for (const tell of [...this.all.map((i) => () => i.removed(t, d, seqs)), ...this.listeners.map((l) => () => l(t, d, seqs, ids))]) {
      await tell().catch((err) => void (failed ??= err));
    }
    if (failed) throw failed;
  }

  async dropDataset(t: string, d: string): Promise<void> {
    for (const index of this.all) await index.dropDataset(t, d);
    rmSync(layout.datasetIndexes(this.dataDir, t, d), { recursive: true, force: true }); // the folder the indexes shared, empty now
  }

  async dropTenant(t: string): Promise<void> {
    for (const index of this.all) await index.dropTenant(t);
    rmSync(layout.tenantIndexes(this.dataDir, t), { recursive: true, force: true });
  }

  /** Optional work: a snapshot that fails is logged, and the store still covers what it would have held. */
  async snapshot(t: string, d: string): Promise<void> {
    for (const index of this.all) await index.snapshot(t, d).catch((err) => logProblem(`${index.name}_snapshot_failed`, err, { tenant_id: t, dataset_id: d }));
  }

  /** Each index closes even when another fails; what failed is rebuilt from the store on the next open. */
  async close(): Promise<void> {
    const closed = await Promise.allSettled(this.all.map((index) => index.close()));
    for (const [i, c] of closed.entries()) if (c.status === 'rejected') logProblem(`${this.all[i].name}_close_failed`, c.reason);
  }
}
