import type { View } from '../../api/views.js';
import type { Found } from '../search/search.js';
import { prefixRange, type Key, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

/**
 * What the store keeps of a view, all under its tenant:
 * - `[t, 'view', view_id]`                          → ViewState
 * - `[t, 'viewrec', view_id, pos]`                  → Found: a materialized view's records, in its order
 * - `[t, 'viewref', dataset_id, record_id, view_id, pos]` → null: which views hold a copy of a record
 * The references name the record by its id, not its seq: a copy made before a re-ingest replaced
 * the record (new seq, same id) still goes when that id is deleted.
 */
export interface ViewState extends View {
  /** building: being copied (answers 404; a build this process no longer runs is swept); removing: being deleted */
  status: 'building' | 'ready' | 'removing';
}

export const stateKey = (t: string, viewId: string): Key => keys.view(t, viewId);
export const recordKey = (t: string, viewId: string, pos: number): Key => keys.viewRecord(t, viewId, pos);
export const refKey = (t: string, datasetId: string, recordId: string, viewId: string, pos: number): Key => keys.viewRef(t, datasetId, recordId, viewId, pos);

/** records removed per transaction when a view goes */
const BATCH = 2000;

export const toView = ({ status: _s, ...view }: ViewState): View => view;

/**
 * Removes a view and every record and reference it holds, a batch per transaction: a view of a
 * million records must not hold the write lock (or the event loop) for the whole of it. It answers
 * 404 from the first step on; should the process stop midway, the sweep finishes the job.
 */
export async function removeView(store: Store, t: string, viewId: string): Promise<void> {
  await store.meta.transaction(() => {
    const state: ViewState | undefined = store.meta.get(stateKey(t, viewId));
    if (state && state.status !== 'removing') store.meta.put(stateKey(t, viewId), { ...state, status: 'removing' });
  });
  for (let more = true; more; ) {
    more = await store.meta.transaction(() => {
      const batch = [...store.meta.getRange({ ...prefixRange(keys.viewRecord(t, viewId)), limit: BATCH })];
      for (const { key, value } of batch as { key: Key; value: Found }[]) {
        store.meta.remove(refKey(t, value.dataset_id, value.record.id, viewId, key[3] as number));
        store.meta.remove(key);
      }
      return batch.length === BATCH;
    });
  }
  await store.meta.remove(stateKey(t, viewId));
}
