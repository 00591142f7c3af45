import { createHash } from 'node:crypto';
import type { SqlColumn } from '../../api/sql.js';
import { Invalid } from '../errors.js';
import { BoundedCache } from '../search/cache.js';
import type { Row, SqlParams } from './execute.js';

/** Rows weigh more than a text search's ranking: answers share a cache of their own. */
export const SQL_PAGES_TTL_MS = 3600_000;
const CACHE = { entries: 1000, bytes: 512 * 2 ** 20, ttlMs: SQL_PAGES_TTL_MS };

/**
 * An answer with more rows than one page, kept in memory for its cursor: every page of it comes
 * from the same execution, so pages neither repeat nor skip rows while the data changes underneath.
 */
export interface SqlHandle {
  search_id: string;
  /** of the statement and its parameters: a cursor continues only the statement it came from */
  fingerprint: string;
  columns: SqlColumn[];
  datasets: string[];
  total: number;
  capped: boolean;
  limit: number;
  created_at: string;
  expires_at: string;
}

export const fingerprint = (sql: string, params: SqlParams) => createHash('sha256').update(JSON.stringify([sql, params])).digest('base64url');

/** A cursor names its answer, the offset, and the statement's fingerprint, so that it can run the statement again. */
export const encodeCursor = (searchId: string, offset: number, print: string) => Buffer.from(JSON.stringify({ s: searchId, o: offset, p: print })).toString('base64url');

export class SqlPages {
  private readonly cache = new BoundedCache<{ handle: SqlHandle; rows: Row[] }>(CACHE);

  save(tenantId: string, fields: Omit<SqlHandle, 'created_at' | 'expires_at'>, rows: Row[], bytes: number): SqlHandle {
    const created = Date.now();
    const handle: SqlHandle = { ...fields, created_at: new Date(created).toISOString(), expires_at: new Date(created + SQL_PAGES_TTL_MS).toISOString() };
    this.cache.set(`${tenantId}/${handle.search_id}`, { handle, rows }, bytes);
    return handle;
  }

  /**
   * The answer a cursor continues and where — `kept` is absent when this process no longer has it
   * (the statement then runs again); a malformed or foreign cursor is a 422 on `cursor`.
   */
  open(tenantId: string, cursor: string, print: string): { searchId: string; offset: number; kept?: { handle: SqlHandle; rows: Row[] } } {
    const bad = (msg: string) => new Invalid(msg, [{ loc: ['body', 'cursor'], msg, type: 'value_error', input: cursor }]);
    let state: { s?: unknown; o?: unknown; p?: unknown };
    try {
      state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw bad('malformed cursor');
    }
    if (typeof state?.s !== 'string' || !Number.isInteger(state.o) || (state.o as number) < 0) throw bad('malformed cursor');
    if ((state.p ?? print) !== print) throw bad('this cursor belongs to another statement or other parameters');
    const kept = this.cache.get(`${tenantId}/${state.s}`);
    if (kept && kept.handle.fingerprint !== print) throw bad('this cursor belongs to another statement or other parameters');
    return { searchId: state.s, offset: state.o as number, kept };
  }
}
