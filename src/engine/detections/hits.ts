import type { Hit } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { StoredRecord } from '../records.js';
import { toResult } from '../search/search.js';
import type { Store } from '../store/db.js';

/** A record a hit names: its dataset and seq. */
export type RecordRef = [datasetId: string, seq: number];

/**
 * A hit as the store keeps it: a search detection's hit names its records (they stay the truth, and
 * a hit stays small); a SQL detection's keeps its rows, which are no records.
 */
export type StoredHit = Omit<Hit, 'records'> & { refs?: RecordRef[]; records?: Hit['records'] };

/** The records a hit shows: the first `LIMITS.hitRecords`, at most `LIMITS.hitBytes` of them (at least one). */
export function shown(t: string, records: [string, StoredRecord | undefined][]): Hit['records'] {
  const out: Hit['records'] = [];
  let bytes = 0;
  for (const [d, rec] of records) {
    if (!rec) continue; // deleted since it matched
    const r = toResult(t, d, rec, 0, 'none', new Set());
    bytes += JSON.stringify(r).length;
    if (out.length >= LIMITS.hitRecords || (out.length > 0 && bytes > LIMITS.hitBytes)) break;
    out.push(r);
  }
  return out;
}

/** A stored hit as the API shows it: its records read from the store as they are now. */
export function materialize<H extends Omit<StoredHit, 'hit_id'>>(store: Store, t: string, hit: H): Omit<H, 'refs' | 'records'> & { records: Hit['records'] } {
  const { refs, records, ...rest } = hit;
  return { ...rest, records: refs ? shown(t, refs.map(([d, seq]) => [d, store.records.get([t, d, seq])])) : (records ?? []) };
}
