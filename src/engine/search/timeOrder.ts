import type { Store } from '../store/db.js';
import { partitionPoint } from '../text/partitionPoint.js';
import { toEpochMs } from './fieldValue.js';

/**
 * On a dataset whose records are in time order (`DatasetState.time_ordered`), the records up to
 * `upto` with `lo ≤ time < hi` are exactly those with seqs in [from, to): two binary searches
 * over seq, a record read per step, instead of a test of every record.
 */
export function seqsInTime(store: Store, t: string, d: string, upto: number, lo: number, hi: number): { from: number; to: number } {
  return { from: firstAtOrAfter(store, t, d, upto, lo), to: firstAtOrAfter(store, t, d, upto, hi) };
}

/** The least seq from which every record's time is at or after `ms` (seqs that hold no record count as such). */
function firstAtOrAfter(store: Store, t: string, d: string, upto: number, ms: number): number {
  if (ms === -Infinity) return 0; // an open end needs no search
  if (ms === Infinity) return upto + 1;
  // before `seq`: the first record at or after it (deleted records leave gaps) is earlier than `ms`
  return partitionPoint(0, upto + 1, (seq) => {
    for (const { value } of store.records.getRange({ start: [t, d, seq], end: [t, d, upto + 1], limit: 1 })) return (toEpochMs(value.time) ?? -Infinity) < ms;
    return false;
  });
}
