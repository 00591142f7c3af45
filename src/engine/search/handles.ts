import type { SearchRequest } from '../../api/search.js';
import { Invalid } from '../errors.js';
import { newId } from '../ids.js';
import type { Store } from '../store/db.js';

export const HANDLE_TTL_MS = 24 * 3600 * 1000;

/** A stored search: what was asked, and how far each dataset's records went when it was first run. */
export interface SearchHandle {
  search_id: string;
  request: SearchRequest;
  /** dataset id → highest seq the search sees; later pages ignore records added since */
  hwm: Record<string, number>;
  created_at: string;
  expires_at: string;
}

export class SearchHandles {
  constructor(private readonly store: Store) {}

  create(tenantId: string, request: SearchRequest, hwm: Record<string, number>): SearchHandle {
    const created = Date.now();
    const handle: SearchHandle = {
      search_id: newId('srch'),
      request: { ...request, cursor: null },
      hwm,
      created_at: new Date(created).toISOString(),
      expires_at: new Date(created + HANDLE_TTL_MS).toISOString(),
    };
    this.store.meta.putSync([tenantId, 'srch', handle.search_id], handle);
    return handle;
  }

  get(tenantId: string, searchId: string): SearchHandle | undefined {
    const handle: SearchHandle | undefined = this.store.meta.get([tenantId, 'srch', searchId]);
    if (!handle) return undefined;
    if (Date.parse(handle.expires_at) < Date.now()) {
      this.store.meta.remove([tenantId, 'srch', searchId]);
      return undefined;
    }
    return handle;
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
