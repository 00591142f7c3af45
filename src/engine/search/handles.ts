import type { SearchRequest } from '../../api/search.js';
import { Invalid } from '../errors.js';
import { LIMITS } from '../../api/limits.js';
import { newId } from '../ids.js';
import { MAX_KEY, removePrefix, type Store } from '../store/db.js';
import { BoundedCache } from './cache.js';

/** One ranked hit: which of the search's datasets, which record, what score. */
export interface RankedHit { ds: number; seq: number; score: number }

/**
 * A stored search: what was asked, over which datasets, and what it counted. Its ranking is held
 * beside it (`SearchHandles.ranking`), so that every page of it comes from the same list.
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
  /** how many hits of the ranking are kept for paging (at most LIMITS.rankingDepth) */
  ranked: number;
  /** per dataset, the last seq the search could see; a record added later is not part of it */
  cutoffs: number[];
  /** the time `time.last` was counted back from */
  now: number;
  created_at: string;
  expires_at: string;
}

/** A ranking a handle holds for its pages: its hits from..to, read when asked for. */
export interface HeldRanking {
  /** how many hits it holds (fewer once a lazy one finds records gone) */
  readonly length: number;
  /** the most memory it takes: what the cache counts */
  readonly bytes: number;
  hits(from: number, to: number): RankedHit[];
}

export const HIT_BYTES = 16;

/** A ranking computed whole, packed into 16 bytes a hit. */
export class PackedRanking implements HeldRanking {
  private readonly buf: Buffer;

  constructor(hits: RankedHit[]) {
    this.buf = Buffer.allocUnsafe(hits.length * HIT_BYTES);
    hits.forEach((h, i) => {
      this.buf.writeUInt32LE(h.ds, i * HIT_BYTES);
      this.buf.writeUInt32LE(h.seq, i * HIT_BYTES + 4);
      this.buf.writeDoubleLE(h.score, i * HIT_BYTES + 8);
    });
  }

  get length(): number {
    return this.buf.length / HIT_BYTES;
  }

  get bytes(): number {
    return this.buf.length;
  }

  hits(from: number, to: number): RankedHit[] {
    const out: RankedHit[] = [];
    for (let i = from; i < Math.min(to, this.length); i++) {
      out.push({ ds: this.buf.readUInt32LE(i * HIT_BYTES), seq: this.buf.readUInt32LE(i * HIT_BYTES + 4), score: this.buf.readDoubleLE(i * HIT_BYTES + 8) });
    }
    return out;
  }
}

/** How long a handle may be paged through; the cache may drop it sooner when full. */
export const HANDLE_TTL_MS = 3600 * 1000;
const CACHE = { entries: 10_000, bytes: 64 * 2 ** 20, ttlMs: HANDLE_TTL_MS };

/** Search handles and their rankings, in memory only: a search writes nothing to disk. */
export class SearchHandles {
  private readonly cache = new BoundedCache<{ handle: SearchHandle; ranking: HeldRanking }>(CACHE);

  /** `searchId` is that of the search a cursor runs again; else a new one. */
  create(tenantId: string, fields: Omit<SearchHandle, 'search_id' | 'created_at' | 'expires_at'>, ranking: HeldRanking, searchId = newId('srch')): SearchHandle {
    const created = Date.now();
    const handle: SearchHandle = {
      search_id: searchId,
      ...fields,
      request: { ...fields.request, cursor: null },
      created_at: new Date(created).toISOString(),
      expires_at: new Date(created + HANDLE_TTL_MS).toISOString(),
    };
    this.cache.set(`${tenantId}/${handle.search_id}`, { handle, ranking }, ranking.bytes + JSON.stringify(handle).length);
    return handle;
  }

  get(tenantId: string, searchId: string): SearchHandle | undefined {
    return this.cache.get(`${tenantId}/${searchId}`)?.handle;
  }

  /** The ranking a handle's pages come from, while the handle is held. */
  ranking(tenantId: string, searchId: string): HeldRanking | undefined {
    return this.cache.get(`${tenantId}/${searchId}`)?.ranking;
  }
}

/**
 * Earlier versions kept handles, rankings and SQL pages in LMDB for a day and never swept them:
 * whatever a data dir still holds of them goes when it is opened.
 */
export async function dropStoredHandles(store: Store, tenantIds: string[]): Promise<void> {
  const kinds = ['srch', 'srchhits', 'sqlh', 'sqlrows'];
  const held = tenantIds.filter((t) => kinds.some((k) => store.meta.getKeysCount({ start: [t, k], end: [t, k, MAX_KEY], limit: 1 }) > 0));
  if (held.length === 0) return;
  await store.meta.transaction(() => {
    for (const t of held) for (const k of kinds) removePrefix(store.meta, [t, k]);
  });
}

/** What a search saw: enough to run it again, the same, when its handle is gone. */
export interface Frozen { request: SearchRequest; datasets: string[]; cutoffs: number[]; now: number }

interface CursorState { s: string; o: number; f?: Frozen }

const encode = (state: CursorState) => Buffer.from(JSON.stringify(state)).toString('base64url');

/**
 * A cursor names its search and offset, and carries the frozen search itself when that fits in
 * `LIMITS.cursor`: a server that restarted, a cache that dropped the handle, or the next local
 * command (a new process) then runs it again with the same cutoffs instead of refusing.
 */
export function encodeCursor(handle: SearchHandle, offset: number): string {
  const { request, datasets, cutoffs, now } = handle;
  const full = encode({ s: handle.search_id, o: offset, f: { request, datasets, cutoffs, now } });
  return full.length <= LIMITS.cursor ? full : encode({ s: handle.search_id, o: offset });
}

/** The search a cursor continues, where, and how to run it again; a malformed cursor is a 422 on `cursor`. */
export function decodeCursor(cursor: string): CursorState {
  const bad = invalidCursor(cursor);
  let state: CursorState;
  try {
    state = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad('malformed cursor');
  }
  if (typeof state?.s !== 'string' || !Number.isInteger(state.o) || state.o < 0) throw bad('malformed cursor');
  const f = state.f;
  if (f !== undefined && !(isObject(f) && isObject(f.request) && isList(f.datasets, 'string') && isList(f.cutoffs, 'number') && f.cutoffs.length === f.datasets.length && f.datasets.length <= LIMITS.datasets && typeof f.now === 'number')) {
    throw bad('malformed cursor');
  }
  return state;
}

export const invalidCursor = (cursor: string) => (msg: string) => new Invalid(msg, [{ loc: ['body', 'cursor'], msg, type: 'value_error', input: cursor }]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isList = (v: unknown, type: string) => Array.isArray(v) && v.every((x) => typeof x === type);
