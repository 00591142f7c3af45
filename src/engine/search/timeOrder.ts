import type { StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { partitionPoint } from '../text/partitionPoint.js';
import { toEpochMs } from './fieldValue.js';
import type { Deadline } from './deadline.js';
import { TopK } from './topK.js';

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

export interface NewestMatch { seq: number; score: number; rec: StoredRecord }

/**
 * What a text search sorted by time newest first can rank from a dataset in time order: the newest
 * `depth` of its matches in [from, to) by seq — time follows seq — and every other match with the
 * time of the oldest of them (ties by time go by score, so any of those may rank), with their
 * records; and how many matched. Only those records are read, not every match's.
 */
export async function newestMatches(
  store: Store, t: string, d: string, found: { seqs: Float64Array; scores: Float64Array },
  run: { from: number; to: number }, upto: number, depth: number, turns: Pick<Deadline, 'due' | 'pause'>,
): Promise<{ matches: NewestMatch[]; count: number }> {
  const { seqs, scores } = found;
  const newest = new TopK<number>(depth, (a, b) => seqs[a] > seqs[b]);
  let count = 0;
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] < run.from || seqs[i] >= run.to) continue;
    count++;
    newest.push(i);
    if (turns.due()) await turns.pause();
  }
  const matches: NewestMatch[] = [];
  let oldest = { seq: Infinity, ms: Infinity };
  const take = (i: number) => {
    const rec = store.records.get([t, d, seqs[i]]);
    if (!rec) return; // deleted since the index answered
    matches.push({ seq: seqs[i], score: scores[i], rec });
    if (rec.seq < oldest.seq) oldest = { seq: rec.seq, ms: toEpochMs(rec.time) ?? -Infinity };
  };
  for (const i of newest.unsorted()) take(i);
  if (count > matches.length && Number.isFinite(oldest.ms)) {
    const ties = firstAtOrAfter(store, t, d, upto, oldest.ms);
    const below = oldest.seq;
    for (let i = 0; i < seqs.length; i++) {
      if (seqs[i] >= Math.max(ties, run.from) && seqs[i] < below) take(i);
      if (turns.due()) await turns.pause();
    }
  }
  return { matches, count };
}
