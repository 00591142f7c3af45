import type { Store } from '../store/db.js';

/** Printable ASCII: such strings sort the same as JavaScript strings and as LMDB's key bytes. */
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * Whether no id of `ids` is stored in the dataset yet and none repeats: then a batch needs no
 * lookup per record. Ids derived from lines sort in line order, so a new object's batch is a run
 * of keys that one read past its least id shows empty. Any other batch (ids of a field, hashed
 * ids, an object ingested again) answers false, and its records are looked up one by one.
 */
export function unseenIds(store: Store, t: string, d: string, ids: string[]): boolean {
  if (ids.length === 0) return true;
  let least = ids[0];
  let most = ids[0];
  for (const id of ids) {
    if (!PLAIN.test(id)) return false;
    if (id < least) least = id;
    if (id > most) most = id;
  }
  if (new Set(ids).size !== ids.length) return false;
  for (const key of store.ids.getKeys({ start: [t, d, least], limit: 1 })) {
    const [kt, kd, id] = key as [string, string, string];
    return !(kt === t && kd === d && id <= most);
  }
  return true;
}
