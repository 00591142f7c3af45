import type { SearchRequest } from '../../api/search.js';
import { Invalid } from '../errors.js';
import { newId } from '../ids.js';
import type { Store } from '../store/db.js';

export const HANDLE_TTL_MS = 24 * 3600 * 1000;

/** One ranked hit: which of the search's datasets, which record, what score. */
export interface RankedHit { ds: number; seq: number; score: number }

/**
 * A stored search: what was asked, over which datasets, and — once a second page may be asked
 * for — its ranking frozen, so that every page of it comes from the same list.
 */
export interface SearchHandle {
  search_id: string;
  request: SearchRequest;
  datasets: string[];
  mode: string;
  score_kind: string;
  /** the index terms the search looked up (from text, the free terms of q, expansions): what snippets highlight */
  terms: string[];
  aggregations: Record<string, unknown>;
  total: number;
  created_at: string;
  expires_at: string;
}

const HIT_BYTES = 16;

function pack(hits: RankedHit[]): Buffer {
  const buf = Buffer.allocUnsafe(hits.length * HIT_BYTES);
  hits.forEach((h, i) => {
    buf.writeUInt32LE(h.ds, i * HIT_BYTES);
    buf.writeUInt32LE(h.seq, i * HIT_BYTES + 4);
    buf.writeDoubleLE(h.score, i * HIT_BYTES + 8);
  });
  return buf;
}

function unpack(buf: Buffer, from: number, to: number): RankedHit[] {
  const out: RankedHit[] = [];
  for (let i = from; i < Math.min(to, buf.length / HIT_BYTES); i++) {
    out.push({ ds: buf.readUInt32LE(i * HIT_BYTES), seq: buf.readUInt32LE(i * HIT_BYTES + 4), score: buf.readDoubleLE(i * HIT_BYTES + 8) });
  }
  return out;
}

export class SearchHandles {
  /** handles whose write has not committed yet: a cursor may come back before it does */
  private readonly unwritten = new Map<string, { handle: SearchHandle; hits?: Buffer }>();

  constructor(private readonly store: Store) {}

  create(tenantId: string, fields: Omit<SearchHandle, 'search_id' | 'created_at' | 'expires_at'>, ranking?: RankedHit[]): SearchHandle {
    const created = Date.now();
    const handle: SearchHandle = {
      search_id: newId('srch'),
      ...fields,
      request: { ...fields.request, cursor: null },
      created_at: new Date(created).toISOString(),
      expires_at: new Date(created + HANDLE_TTL_MS).toISOString(),
    };
    const hits = ranking && pack(ranking);
    // written in the background: a search must not wait for a disk flush
    const pendingKey = `${tenantId}/${handle.search_id}`;
    this.unwritten.set(pendingKey, { handle, hits });
    void this.store.meta
      .transaction(() => {
        this.store.meta.put([tenantId, 'srch', handle.search_id], handle);
        if (hits) this.store.meta.put([tenantId, 'srchhits', handle.search_id], hits);
      })
      .finally(() => this.unwritten.delete(pendingKey));
    return handle;
  }

  get(tenantId: string, searchId: string): SearchHandle | undefined {
    const pending = this.unwritten.get(`${tenantId}/${searchId}`);
    if (pending) return pending.handle;
    const handle: SearchHandle | undefined = this.store.meta.get([tenantId, 'srch', searchId]);
    if (!handle) return undefined;
    if (Date.parse(handle.expires_at) < Date.now()) {
      this.store.meta.remove([tenantId, 'srch', searchId]);
      this.store.meta.remove([tenantId, 'srchhits', searchId]);
      return undefined;
    }
    return handle;
  }

  /** The frozen ranking from `from` (inclusive) to `to` (exclusive). */
  hits(tenantId: string, searchId: string, from: number, to: number): RankedHit[] {
    const pending = this.unwritten.get(`${tenantId}/${searchId}`);
    const buf: Buffer | undefined = pending ? pending.hits : this.store.meta.get([tenantId, 'srchhits', searchId]);
    return buf ? unpack(buf, from, to) : [];
  }
}

interface CursorState { s: string; o: number }

export function encodeCursor(searchId: string, offset: number): string {
  return Buffer.from(JSON.stringify({ s: searchId, o: offset } satisfies CursorState)).toString('base64url');
}

/** The search a cursor continues and where; a cursor that is malformed or expired is a 422 on `cursor`. */
export function decodeCursor(handles: SearchHandles, tenantId: string, cursor: string): { handle: SearchHandle; offset: number } {
  const bad = (msg: string) => new Invalid(msg, [{ loc: ['body', 'cursor'], msg, type: 'value_error', input: cursor }]);
  let state: CursorState;
  try {
    state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad('malformed cursor');
  }
  if (typeof state?.s !== 'string' || !Number.isInteger(state.o) || state.o < 0) throw bad('malformed cursor');
  const handle = handles.get(tenantId, state.s);
  if (!handle) throw bad('cursor expired or unknown: run the search again');
  return { handle, offset: state.o };
}
