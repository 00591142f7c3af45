import { createHash } from 'node:crypto';
import type { SqlColumn } from '../../api/sql.js';
import { Invalid } from '../errors.js';
import { removePrefix, scanPrefix, type Store } from '../store/db.js';
import type { Row, SqlValue } from './execute.js';

/** Rows per stored chunk. */
const CHUNK = 1000;
/** Rows weigh more than a text search's ranking: an answer is kept for an hour, not a day. */
export const SQL_PAGES_TTL_MS = 3600_000;

/**
 * An answer with more rows than one page, kept for its cursor: every page of it comes from the same
 * execution, so pages neither repeat nor skip rows while the data changes underneath.
 * `[tenant, 'sqlh', search_id]` holds the handle, `[tenant, 'sqlrows', search_id, n]` chunk n of rows.
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

export const fingerprint = (sql: string, params: SqlValue[]) => createHash('sha256').update(JSON.stringify([sql, params])).digest('base64url');

export const encodeCursor = (searchId: string, offset: number) => Buffer.from(JSON.stringify({ s: searchId, o: offset })).toString('base64url');

export class SqlPages {
  constructor(private readonly store: Store) {}

  async save(tenantId: string, fields: Omit<SqlHandle, 'created_at' | 'expires_at'>, rows: Row[]): Promise<SqlHandle> {
    const created = Date.now();
    const handle: SqlHandle = { ...fields, created_at: new Date(created).toISOString(), expires_at: new Date(created + SQL_PAGES_TTL_MS).toISOString() };
    await this.store.meta.transaction(() => {
      this.sweep(tenantId, created);
      this.store.meta.put([tenantId, 'sqlh', handle.search_id], handle);
      for (let i = 0; i * CHUNK < rows.length; i++) this.store.meta.put([tenantId, 'sqlrows', handle.search_id, i], rows.slice(i * CHUNK, (i + 1) * CHUNK));
    });
    return handle;
  }

  /** The handle a cursor continues and where; a malformed, expired or foreign cursor is a 422 on `cursor`. */
  open(tenantId: string, cursor: string, print: string): { handle: SqlHandle; offset: number } {
    const bad = (msg: string) => new Invalid(msg, [{ loc: ['body', 'cursor'], msg, type: 'value_error', input: cursor }]);
    let state: { s?: unknown; o?: unknown };
    try {
      state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw bad('malformed cursor');
    }
    if (typeof state?.s !== 'string' || !Number.isInteger(state.o) || (state.o as number) < 0) throw bad('malformed cursor');
    const handle: SqlHandle | undefined = this.store.meta.get([tenantId, 'sqlh', state.s]);
    if (!handle || Date.parse(handle.expires_at) < Date.now()) throw bad('cursor expired or unknown: run the statement again');
    if (handle.fingerprint !== print) throw bad('this cursor belongs to another statement or other parameters');
    return { handle, offset: state.o as number };
  }

  rows(tenantId: string, handle: SqlHandle, from: number, to: number): Row[] {
    const out: Row[] = [];
    for (let i = Math.floor(from / CHUNK); i * CHUNK < Math.min(to, handle.total); i++) {
      const chunk: Row[] = this.store.meta.get([tenantId, 'sqlrows', handle.search_id, i]) ?? [];
      out.push(...chunk.slice(Math.max(0, from - i * CHUNK), to - i * CHUNK));
    }
    return out;
  }

  /** Forgets expired handles, oldest first (their ids sort by creation time); inside a write transaction. */
  private sweep(tenantId: string, nowMs: number): void {
    for (const { value } of scanPrefix<SqlHandle>(this.store.meta, [tenantId, 'sqlh'])) {
      if (Date.parse(value.expires_at) >= nowMs) return;
      this.store.meta.remove([tenantId, 'sqlh', value.search_id]);
      removePrefix(this.store.meta, [tenantId, 'sqlrows', value.search_id]);
    }
  }
}
