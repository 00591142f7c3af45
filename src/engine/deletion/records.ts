import type { DatasetState } from '../datasets/datasets.js';
import type { StoredRecord } from '../records.js';
import { MAX_KEY, type Store } from '../store/db.js';
import type { TextIndexes } from '../text/textIndexes.js';

const BATCH = 2000;

/** Called once deleted records are gone from the store, so that indexes besides the text index drop them too. */
export const recordsDeleted: ((store: Store, tenantId: string, datasetId: string, seqs: number[]) => void)[] = [];

/** `ids` are the deleted records' own ids, in the order of `seqs`: what a copy of a record made before a re-ingest replaced it still shares */
type DeletedListener = (tenantId: string, datasetId: string, seqs: number[], ids: string[]) => Promise<void>;
const listeners = new WeakMap<Store, DeletedListener[]>();

/** Lets what is derived from the records (the SQL index, views) drop deleted records as each batch goes. */
export function onRecordsDeleted(store: Store, listener: DeletedListener): void {
  listeners.set(store, [...(listeners.get(store) ?? []), listener]);
}

/** Which records go: those a scan of the dataset matches, or the ones at these sequences (no scan). */
export type Selection = ((rec: StoredRecord) => boolean) | { seqs: number[] };

/**
 * Deletes a dataset's selected records, a batch per transaction. Each deletion leaves a
 * tombstone `[tenant, 'tomb', dataset, seq]` in the same transaction, so that a text index
 * snapshot written before it still loses the record when it is next opened.
 * Returns how many records went, per source object key.
 */
export async function deleteRecords(store: Store, text: TextIndexes | null, t: string, d: string, select: Selection): Promise<Map<string, number>> {
  const byKey = new Map<string, number>();
  let batch: StoredRecord[] = [];
  const flush = async () => {
    const gone = batch;
    batch = [];
    await store.meta.transaction(() => {
      const ds: DatasetState | undefined = store.meta.get([t, 'dataset', d]);
      for (const rec of gone) {
        store.records.remove([t, d, rec.seq]);
        if (store.ids.get([t, d, rec.id]) === rec.seq) store.ids.remove([t, d, rec.id]);
        store.meta.put([t, 'tomb', d, rec.seq], 1);
        store.meta.put([t, 'sqltomb', d, rec.seq], 1); // the SQL index's own, removed once its table lost the row
      }
      if (ds) store.meta.put([t, 'dataset', d], { ...ds, record_count: Math.max(0, ds.record_count - gone.length) });
    });
    // should the text index not take it now, the tombstones above make it drop them when it next opens
    await text?.remove(t, d, gone.map((r) => r.seq)).catch(() => {});
    for (const hook of recordsDeleted) hook(store, t, d, gone.map((r) => r.seq));
    for (const listener of listeners.get(store) ?? []) await listener(t, d, gone.map((r) => r.seq), gone.map((r) => r.id));
    for (const rec of gone) byKey.set(rec.key, (byKey.get(rec.key) ?? 0) + 1);
  };
  for (const rec of selected(store, t, d, select)) {
    batch.push(rec);
    if (batch.length >= BATCH) await flush();
  }
  if (batch.length > 0) await flush();
  return byKey;
}

function* selected(store: Store, t: string, d: string, select: Selection): Iterable<StoredRecord> {
  if (typeof select !== 'function') {
    for (const seq of select.seqs) {
      const rec: StoredRecord | undefined = store.records.get([t, d, seq]);
      if (rec) yield rec;
    }
    return;
  }
  for (const { value: rec } of store.records.getRange({ start: [t, d, 0], end: [t, d, MAX_KEY] })) if (select(rec)) yield rec;
}
