import { SQL_DEFAULT_LIMIT, type SqlColumn, type SqlEnvelope, type SqlRecord, type SqlRequest } from '../../api/sql.js';
import type { Caller } from '../auth/caller.js';
import { Invalid } from '../errors.js';
import { newId } from '../ids.js';
import type { StoredRecord } from '../records.js';
import { toResult } from '../search/search.js';
import type { Store } from '../store/db.js';
import type { Row, SqlParams, SqlValue } from './execute.js';
import { checkStatement } from './guard.js';
import { encodeCursor, fingerprint, SqlPages } from './pages.js';
import type { SqlIndexes } from './sqlIndexes.js';

/**
 * `POST /v1/sql`: one checked, read-only statement over the caller's tenant database, answered in
 * the search envelope. An answer longer than a page is kept for its cursor (up to the row cap).
 */
export class SqlQueries {
  private readonly pages: SqlPages;

  constructor(
    private readonly store: Store,
    private readonly indexes: SqlIndexes,
  ) {
    this.pages = new SqlPages();
  }

  async run(caller: Caller, req: SqlRequest, named?: Record<string, SqlValue>): Promise<SqlEnvelope> {
    const started = performance.now();
    const t = caller.tenant_id;
    refuseNul(req.sql);
    const params: SqlParams = named ?? req.params ?? [];
    const print = fingerprint(req.sql, params);
    let at = { searchId: newId('srch'), offset: 0 };
    if (req.cursor) {
      const { kept, ...where } = this.pages.open(t, req.cursor, print);
      if (kept) {
        const limit = req.limit ?? kept.handle.limit;
        const rows = kept.rows.slice(where.offset, where.offset + limit);
        const next = where.offset + limit < kept.handle.total ? encodeCursor(kept.handle.search_id, where.offset + limit, print) : null;
        return this.envelope(t, kept.handle.search_id, kept.handle.columns, kept.handle.datasets, rows, where.offset, { total: kept.handle.total, capped: kept.handle.capped, next }, started);
      }
      at = where; // this process no longer has the answer: the statement runs again and the page is read from its new answer
    }

    const limit = req.limit ?? SQL_DEFAULT_LIMIT;
    const db = await this.indexes.tenant(t);
    const conn = await db.connect();
    try {
      const { datasets } = await checkStatement(conn, req.sql, db.catalog);
      const { execute } = await import('./execute.js'); // with DuckDB's value helpers: loaded by the first query, not at start-up
      const answer = await execute(conn, req.sql, params, this.indexes.limits.maxResultRows, this.indexes.limits);
      const total = answer.rows.length;
      const end = at.offset + limit;
      const page = { total, capped: answer.capped, next: end < total ? encodeCursor(at.searchId, end, print) : null };
      if (page.next || at.offset > 0) {
        this.pages.save(t, { search_id: at.searchId, fingerprint: print, columns: answer.columns, datasets, total, capped: answer.capped, limit }, answer.rows, answer.bytes);
      }
      return this.envelope(t, at.searchId, answer.columns, datasets, answer.rows.slice(at.offset, end), at.offset, page, started);
    } finally {
      conn.closeSync();
    }
  }

  private envelope(
    t: string,
    searchId: string,
    columns: SqlColumn[],
    datasets: string[],
    rows: Row[],
    offset: number,
    page: { total: number; capped: boolean; next: string | null },
    started: number,
  ): SqlEnvelope {
    return {
      search_id: searchId,
      took_ms: Math.round((performance.now() - started) * 100) / 100,
      mode: 'sql',
      total: { relation: page.capped ? 'gte' : 'eq', value: page.total },
      columns,
      records: rows.map((row, i) => sqlRecord(this.store, t, datasets, row, offset + i + 1)),
      aggregations: {},
      next_cursor: page.next,
    };
  }
}

/** DuckDB reads the statement as a C string: the guard and the database would see different texts. */
export function refuseNul(sql: string, loc: (string | number)[] = ['body', 'sql']): void {
  if (sql.includes('\u0000')) throw new Invalid('a statement cannot hold a NUL character', [{ loc, msg: 'a statement cannot hold a NUL character', type: 'value_error' }]);
}

/** A row as a result record: the record its `_id` names, when the statement's datasets hold one, else the row alone. */
export function sqlRecord(store: Store, t: string, datasets: string[], row: Row, n: number): SqlRecord {
  const found = typeof row._id === 'string' ? recordById(store, t, datasets, row._id) : null;
  if (!found) return { id: String(n), title: null, body: '', metadata: row, score: 0, score_kind: 'none', snippets: [], created_at: null, time: null, provenance: null };
  return { ...toResult(t, found.d, found.rec, 0, 'none', new Set()), metadata: row };
}

function recordById(store: Store, t: string, datasets: string[], id: string): { d: string; rec: StoredRecord } | null {
  for (const d of datasets) {
    const seq = store.ids.get([t, d, id]);
    const rec = seq === undefined ? undefined : store.records.get([t, d, seq]);
    if (rec) return { d, rec };
  }
  return null;
}
