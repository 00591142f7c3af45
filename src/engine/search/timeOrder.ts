import type { Store } from '../store/db.js';
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
  let lo = 0;
  let hi = upto + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    // the first record at or after `mid`: deleted records leave gaps in seq
    let time: string | null | undefined;
    for (const { value } of store.records.getRange({ start: [t, d, mid], end: [t, d, upto + 1], limit: 1 })) time = value.time;
    if (time === undefined || (toEpochMs(time) ?? -Infinity) >= ms) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
