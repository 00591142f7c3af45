import type { Database, RootDatabase } from 'lmdb';
import { asDiskFull, diskWrite, MDB_MAP_FULL } from '../diskErrors.js';

type Writable = Database<any, any>;
const ASYNC_WRITES = ['transaction', 'put', 'remove'] as const;
const SYNC_WRITES = ['transactionSync', 'putSync', 'removeSync'] as const;

/**
 * Makes every write of these databases speak DiskFull: a failed commit (ENOSPC, EIO, map full)
 * rejects with DiskFull instead of lmdb-js's "Commit failed", whose second, unobserved promise
 * would otherwise end the process. Done here, once, so that no write path can forget it.
 *
 * lmdb-js grows its memory map whenever a transaction needs more room, so LMDB never reports
 * MDB_MAP_FULL by itself. With `maxBytes`, svc sets that limit: a write that starts once the
 * store's pages reach it fails as MDB_MAP_FULL would (a store capped below the disk, and the way
 * tests fill the store without filling a disk).
 */
export function guardWrites(env: RootDatabase<any, any>, dbs: Writable[], maxBytes?: number): void {
  const full = (): Error | null => {
    if (!maxBytes) return null;
    const stats = env.getStats() as { lastPageNumber: number; pageSize: number };
    const used = (stats.lastPageNumber + 1) * stats.pageSize;
    if (used < maxBytes) return null;
    return Object.assign(new Error(`MDB_MAP_FULL: the store holds ${used} bytes of its ${maxBytes}`), { code: MDB_MAP_FULL });
  };
  // inside a transaction a write joins it: the transaction is what reports the failure
  const inTransaction = () => Boolean((env as unknown as { writeTxn?: unknown }).writeTxn);
  for (const db of dbs) {
    const target = db as unknown as Record<string, (...args: unknown[]) => any>;
    for (const name of ASYNC_WRITES) {
      const original = target[name].bind(db);
      target[name] = (...args: unknown[]) => {
        if (inTransaction()) return original(...args);
        const refused = full();
        if (refused) return Promise.reject(asDiskFull(refused, 'the record store'));
        return diskWrite('the record store', () => original(...args));
      };
    }
    for (const name of SYNC_WRITES) {
      const original = target[name].bind(db);
      target[name] = (...args: unknown[]) => {
        if (inTransaction()) return original(...args);
        const refused = full();
        if (refused) throw asDiskFull(refused, 'the record store');
        try {
          return original(...args);
        } catch (err) {
          throw asDiskFull(err, 'the record store');
        }
      };
    }
  }
}
