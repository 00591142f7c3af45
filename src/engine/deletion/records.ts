import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { DatasetState } from '../datasets/datasets.js';
import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import type { StoredRecord } from '../records.js';
import { MAX_KEY, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

const BATCH = 2000;
/** Records looked at between two turns of the event loop. */
const SCAN_TURN = 5000;

/** Which records go: those a scan of the dataset matches, or the ones at these sequences (no scan). */
export type Selection = ((rec: StoredRecord) => boolean) | { seqs: number[] };

/**
 * Deletes a dataset's selected records, a batch per transaction, and takes them out of every
 * derived index. Each index marks what it must lose in the same transaction (its tombstones), so
 * that one closed now, or whose snapshot predates the deletion, still loses them when it opens.
 * Returns how many records went, per source object key.
 */
export async function deleteRecords(store: Store, derived: DerivedIndexes, t: string, d: string, select: Selection): Promise<Map<string, number>> {
  const byKey = new Map<string, number>();
  let batch: StoredRecord[] = [];
  const flush = async () => {
    const gone = batch;
    batch = [];
    await store.meta.transaction(() => {
      const ds: DatasetState | undefined = store.meta.get(keys.dataset(t, d));
      for (const rec of gone) {
        store.records.remove([t, d, rec.seq]);
        if (store.ids.get([t, d, rec.id]) === rec.seq) store.ids.remove([t, d, rec.id]);
      }
      derived.deleting(t, d, gone.map((r) => r.seq));
      if (ds) store.meta.put(keys.dataset(t, d), { ...ds, record_count: Math.max(0, ds.record_count - gone.length) });
    });
    await derived.removed(t, d, gone.map((r) => r.seq), gone.map((r) => r.id));
    for (const rec of gone) byKey.set(rec.key, (byKey.get(rec.key) ?? 0) + 1);
  };
  let looked = 0;
  for (const rec of candidates(store, t, d, select)) {
    // a scan that matches little still lets the event loop turn
    if (++looked % SCAN_TURN === 0) await yieldToLoop();
    if (typeof select === 'function' && !select(rec)) continue;
    batch.push(rec);
    if (batch.length >= BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  return byKey;
}

/** The records a selection looks at: the dataset's, in order, for a scan; those at its sequences otherwise. */
function* candidates(store: Store, t: string, d: string, select: Selection): Iterable<StoredRecord> {
  if (typeof select !== 'function') {
    for (const seq of select.seqs) {
      const rec: StoredRecord | undefined = store.records.get([t, d, seq]);
      if (rec) yield rec;
    }
    return;
  }
  for (const { value: rec } of store.records.getRange({ start: [t, d, 0], end: [t, d, MAX_KEY] })) yield rec;
}
