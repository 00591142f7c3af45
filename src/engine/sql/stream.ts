import { LIMITS } from '../../api/limits.js';
import type { SqlColumn, SqlRecord } from '../../api/sql.js';
import type { Store } from '../store/db.js';
import type { SqlParams, SqlValue } from './execute.js';
import { checkStatement } from './guard.js';
import { refuseNul, sqlRecord } from './queries.js';
import type { SqlIndexes } from './sqlIndexes.js';
import { sqlError } from './sqlErrors.js';

/** Every row of one statement, in batches of at most a DuckDB chunk (2,048 rows) and about `LIMITS.pageBytes`; `close` ends it early. */
export interface SqlStream {
  columns: SqlColumn[];
  batches: AsyncGenerator<SqlRecord[]>;
  close(): void;
}

/**
 * Whether a statement may run, decided as a query decides it (NUL, the guard, preparing it in a
 * read-only transaction) but without running it: what an export checks before it makes its job.
 */
export async function checkRead(indexes: SqlIndexes, t: string, sql: string, params: SqlParams): Promise<void> {
  refuseNul(sql);
  const db = await indexes.tenant(t);
  const conn = await db.connect();
  try {
    await checkStatement(conn, sql, db.catalog);
    const { prepareRead } = await import('./execute.js');
    await prepareRead(conn, sql, params);
  } catch (err) {
    throw sqlError(err, indexes.limits, false);
  } finally {
    conn.closeSync();
  }
}

/**
 * Streams a statement's rows as result records, with no row cap: each chunk is converted and
 * handed over only when the consumer asks for the next, so memory holds one chunk whatever the
 * row count. A row that selects `_id` brings its stored record (a body of up to 1 MiB): a chunk
 * is split into batches of about `LIMITS.pageBytes`, as search pages are, and a row larger than a
 * SQL page is refused. One read-only transaction covers the whole read; a timer interrupts it at
 * `timeoutMs`.
 */
export async function streamRead(store: Store, indexes: SqlIndexes, t: string, sql: string, params: SqlValue[], timeoutMs: number): Promise<SqlStream> {
  refuseNul(sql);
  const limits = { ...indexes.limits, timeoutMs };
  const db = await indexes.tenant(t);
  const conn = await db.connect();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.interrupt();
  }, timeoutMs);
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearTimeout(timer);
    conn.closeSync(); // ends the transaction
  };
  try {
    const { datasets } = await checkStatement(conn, sql, db.catalog);
    const { prepareRead, reader } = await import('./execute.js');
    const result = await (await prepareRead(conn, sql, params)).stream();
    const { columns, sizedRows } = reader(result);
    async function* batches(): AsyncGenerator<SqlRecord[]> {
      let n = 0;
      try {
        for (;;) {
          const chunk = await result.fetchChunk();
          if (!chunk || chunk.rowCount === 0) return;
          let batch: SqlRecord[] = [];
          let bytes = 0;
          for (const { row, bytes: rowBytes } of sizedRows(chunk)) {
            const rec = sqlRecord(store, t, datasets, row, ++n);
            const size = rowBytes + rec.body.length + (rec.title?.length ?? 0);
            if (batch.length > 0 && bytes + size > LIMITS.pageBytes) {
              yield batch;
              batch = [];
              bytes = 0;
            }
            batch.push(rec);
            bytes += size;
          }
          if (batch.length > 0) yield batch;
        }
      } catch (err) {
        throw sqlError(err, limits, timedOut);
      } finally {
        close();
      }
    }
    return { columns, batches: batches(), close };
  } catch (err) {
    close();
    throw sqlError(err, limits, timedOut);
  }
}
