import { LIMITS } from '../../api/limits.js';
import type { Store } from '../store/db.js';

/** Printable ASCII: such strings sort the same as JavaScript strings and as LMDB's key bytes. */
const PLAIN = /^[\x20-\x7e]*$/;

/**
 * Whether no id of `ids` is stored in the dataset yet and none repeats: then a batch needs no
 * lookup per record. True only when no stored id lies between the batch's least and greatest id
 * (one read finds the first one past the least): ids derived from lines sort in line order, so a
 * new object's batches are such runs. An id too long for a key (refused later, record by record)
 * answers false rather than reach the read.
 */
export function unseenIds(store: Store, t: string, d: string, ids: string[]): boolean {
  if (ids.length === 0) return true;
  let least = ids[0];
  let most = ids[0];
  for (const id of ids) {
    if (id.length > LIMITS.recordId || !PLAIN.test(id)) return false;
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
