import { open, type Database, type RootDatabase } from 'lmdb';
import { mkdirSync } from 'node:fs';
import type { StoredRecord } from '../records.js';
import { guardWrites } from './guard.js';
import { layout } from '../layout.js';

/** Tenant id under which keys that belong to no tenant (users, token lookups) are stored. */
export const SYSTEM = '~';

export type Key = (string | number)[];

/**
 * The LMDB environment of a data dir. Every key begins with a tenant id (or SYSTEM).
 * - meta:    [tenant, kind, ...]            → JSON-like values (tenants, datasets, runs, sources, handles)
 * - records: [tenant, dataset, seq]         → StoredRecord, the truth every index derives from
 * - ids:     [tenant, dataset, record id]   → seq of the record holding that id now
 */
export interface Store {
  env: RootDatabase;
  /** the cap it was opened with (undefined: unbounded), for another thread that opens the same environment */
  mapSize?: number;
  meta: Database<any, Key>;
  records: Database<StoredRecord, Key>;
  ids: Database<number, Key>;
  close(): Promise<void>;
}

/** The map lmdb-js starts with when no size is set; it grows the map past it as the store needs. */
const DEFAULT_MAP_SIZE = 2 ** 36;

export interface StoreOptions {
  /** the largest the store may grow to, in bytes (default: unbounded; `SVC_LMDB_MAP_SIZE`, see config.ts); see guard.ts */
  mapSize?: number;
}

export function openStore(dataDir: string, opts: StoreOptions = {}): Store {
  const path = layout.meta(dataDir);
  mkdirSync(path, { recursive: true });
  const mapSize = opts.mapSize;
  // Event-turn batching wraps the writes of an event turn in a commit promise of lmdb-js's own that
  // nobody awaits: when that commit fails (a full disk), its rejection would end the process. Every
  // write here that must be atomic says so with a transaction.
  const env = open<any, Key>({ path, maxDbs: 8, mapSize: mapSize ?? DEFAULT_MAP_SIZE, pageSize: 8192, eventTurnBatching: false });
  const meta = env.openDB<any, Key>({ name: 'meta' });
  const records = env.openDB<StoredRecord, Key>({ name: 'records' });
  const ids = env.openDB<number, Key>({ name: 'ids' });
  guardWrites(env, [meta, records, ids], mapSize);
  return { env, mapSize, meta, records, ids, close: () => env.close() };
}

/** The keys starting with `prefix`, from `from` (a key under it) on. */
export const prefixRange = (prefix: Key, from: Key = prefix) => ({ start: from, end: [...prefix, MAX_KEY] });

/** Every value whose key starts with `prefix`, in key order. */
export function* scanPrefix<V>(db: Database<V, Key>, prefix: Key, opts: { reverse?: boolean; limit?: number } = {}): Generator<{ key: Key; value: V }> {
  const start = opts.reverse ? [...prefix, MAX_KEY] : prefix;
  const end = opts.reverse ? prefix : [...prefix, MAX_KEY];
  for (const entry of db.getRange({ start, end, reverse: opts.reverse, limit: opts.limit })) {
    yield { key: entry.key as Key, value: entry.value };
  }
}

/**
 * A page of a list whose keys are `[...prefix, id]` with ids that sort by time: newest first, after
 * the id `cursor` (the last of the page before); `keep` leaves entries out, and the first entry
 * `older` holds for ends the list (what follows is older still). `next` is the last id of the page
 * when more follow.
 */
export function newestFirst<V>(db: Database<any, Key>, prefix: Key, cursor: string | undefined, limit: number, keep: (v: V) => boolean = () => true, older?: (v: V) => boolean): { values: V[]; next: string | null } {
  const values: V[] = [];
  const ids: string[] = [];
  for (const { key, value } of db.getRange({ start: [...prefix, cursor ?? MAX_KEY], end: prefix, reverse: true })) {
    const id = (key as Key)[prefix.length] as string;
    if (id === cursor || !keep(value)) continue; // the range starts at the cursor itself
    if (older?.(value)) break;
    if (values.length === limit) return { values, next: ids[limit - 1] };
    values.push(value);
    ids.push(id);
  }
  return { values, next: null };
}

/** Sorts after every string and number key part (lmdb orders strings after numbers). */
export const MAX_KEY = '\uffff';

/** Removes every key starting with `prefix`, `batch` keys a transaction: a long list never holds the write lock for long. */
export async function removePrefixInBatches(db: Database<any, Key>, prefix: Key, batch = 1000): Promise<void> {
  for (;;) {
    const keys = [...db.getKeys({ ...prefixRange(prefix), limit: batch })] as Key[];
    if (keys.length === 0) return;
    await db.transaction(() => keys.forEach((k) => db.remove(k)));
  }
}

/** Removes every key starting with `prefix`; call inside a write transaction. */
export function removePrefix(db: Database<any, Key>, prefix: Key): number {
  let n = 0;
  for (const key of db.getKeys(prefixRange(prefix))) {
    db.remove(key as Key);
    n++;
  }
  return n;
}
