import type { Found } from '../search/search.js';
import type { Store } from '../store/db.js';
import { recordKey, refKey } from './stored.js';

/**
 * Copies an answer's records into a view, in its order, one transaction per batch; the event loop
 * turns between batches while each commits. Returns how many records the view holds.
 *
 * A record deleted after the search read it and before its batch commits is left out: its
 * deletion's listener may have looked for references before this batch wrote any. A record whose
 * id still exists (even replaced by a re-ingest since) is kept as it was read.
 */
export async function materialize(store: Store, t: string, viewId: string, answer: AsyncIterable<Found[]>): Promise<number> {
  let pos = 0;
  for await (const batch of answer) {
    if (batch.length === 0) continue;
    await store.meta.transaction(() => {
      for (const found of batch) {
        if (store.ids.get([t, found.dataset_id, found.record.id]) === undefined) continue;
        store.meta.put(recordKey(t, viewId, pos), found);
        store.meta.put(refKey(t, found.dataset_id, found.record.id, viewId, pos), null);
        pos++;
      }
    });
  }
  return pos;
}
