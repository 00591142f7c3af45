import type { Store } from '../store/db.js';
import { HIT_BYTES, type HeldRanking, type RankedHit } from './handles.js';

/** The seqs of one dataset of a search that it ranks: from `to` - 1 down to `from`. */
export interface SeqRun { ds: number; dataset_id: string; from: number; to: number }

/**
 * What a search ranks when it has nothing to score or test beyond a run of seqs per dataset: every
 * record of the runs, run after run, each newest first. It reads the store's keys (never records)
 * only as far as its pages ask, each page going on below the last seq read: a search polled for
 * the newest records reads one page, not its whole ranking. Records added later are above the
 * runs and never seen; one deleted before its page is read is skipped, and the ranking ends early.
 */
export class NewestFirst implements HeldRanking {
  private readonly seqs: number[] = [];
  private readonly dss: number[] = [];
  private run = 0;
  /** the seq the next read starts below, in `runs[run]` */
  private below: number;

  constructor(
    private readonly store: Store,
    private readonly tenantId: string,
    private readonly runs: SeqRun[],
    public length: number,
  ) {
    this.below = runs[0]?.to ?? 0;
  }

  /** what it holds once every page was read: the cache counts that up front */
  get bytes(): number {
    return this.length * HIT_BYTES;
  }

  hits(from: number, to: number): RankedHit[] {
    this.readTo(Math.min(to, this.length));
    const out: RankedHit[] = [];
    for (let i = from; i < Math.min(to, this.seqs.length); i++) out.push({ ds: this.dss[i], seq: this.seqs[i], score: 0 });
    return out;
  }

  private readTo(n: number): void {
    while (this.seqs.length < n && this.run < this.runs.length) {
      const { ds, dataset_id: d, from } = this.runs[this.run];
      const range = { start: [this.tenantId, d, this.below - 1], end: [this.tenantId, d, from - 1], reverse: true, limit: n - this.seqs.length };
      for (const key of this.store.records.getKeys(range)) {
        this.seqs.push(key[2] as number);
        this.dss.push(ds);
      }
      if (this.seqs.length < n) this.below = this.runs[++this.run]?.to ?? 0;
      else this.below = this.seqs[this.seqs.length - 1];
    }
    if (this.seqs.length < n) this.length = this.seqs.length; // records deleted since the search counted them
  }
}
