import { prefixRange, type Key, type Store } from '../store/db.js';
import { recordKey, stateKey, type ViewState } from './stored.js';
import { keys } from '../store/keys.js';

/**
 * Deletions win: a record a deletion took out of the store (deletion job, retention, dataset
 * deletion) leaves every materialized view holding a copy of it, and each such view counts what it
 * lost. A tenant with no view of the dataset pays one key-range probe per deleted batch.
 */
export function dropDeletedFromViews(store: Store) {
  return async (t: string, datasetId: string, _seqs: number[], ids: string[]): Promise<void> => {
    if (store.meta.getKeysCount({ ...prefixRange(keys.viewRef(t, datasetId)), limit: 1 }) === 0) return;
    await store.meta.transaction(() => {
      const lost = new Map<string, number>();
      for (const id of new Set(ids)) {
        for (const key of [...store.meta.getKeys(prefixRange(keys.viewRef(t, datasetId, id)))] as Key[]) {
          const [viewId, pos] = key.slice(4) as [string, number];
          store.meta.remove(recordKey(t, viewId, pos));
          store.meta.remove(key);
          lost.set(viewId, (lost.get(viewId) ?? 0) + 1);
        }
      }
      for (const [viewId, n] of lost) {
        const state: ViewState | undefined = store.meta.get(stateKey(t, viewId));
        if (state) store.meta.put(stateKey(t, viewId), { ...state, deleted_count: state.deleted_count + n });
      }
    });
  };
}
