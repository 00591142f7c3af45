import type { DerivedIndexes } from '../derived/derivedIndexes.js';
import { LIMITS } from '../../api/limits.js';
import type { SearchRequest } from '../../api/search.js';
import type { View, ViewCreate, ViewList, ViewListQuery, ViewRecords, ViewRecordsQuery } from '../../api/views.js';
import type { Caller } from '../auth/caller.js';
import { NotFound } from '../errors.js';
import { newId, now } from '../ids.js';
import type { Frozen } from '../search/handles.js';
import type { Found, Search } from '../search/search.js';
import { newestFirst, prefixRange, scanPrefix, type Store } from '../store/db.js';
import { answers, checkCreate, expired } from './checks.js';
import { listCursor, recordsCursor } from './cursors.js';
import { dropDeletedFromViews } from './deletions.js';
import { materialize } from './materialize.js';
import { recordKey, removeView, stateKey, toView, type ViewState } from './stored.js';
import { keys } from '../store/keys.js';

const LIST_LIMIT = 50;
const RECORDS_LIMIT = 20;
/** records one read of a whole view takes */
const BATCH = 500;

/**
 * Saved searches. A materialized view holds a copy of its answer's records, in order, as they
 * were when it was made; only deletions take records out of it. A live view holds its request
 * and runs it again on every read.
 */
export class Views {
  /** views this process is copying now: a 'building' view not among them was left by a process that stopped */
  private readonly building = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly search: Search,
    private readonly tenantIds: () => string[],
    derived: DerivedIndexes,
  ) {
    derived.onRemoved(dropDeletedFromViews(store));
  }

  async create(caller: Caller, req: ViewCreate): Promise<View> {
    checkCreate(req);
    const handle = req.from_search_id ? this.search.handle(caller, req.from_search_id) : null;
    const request: SearchRequest = handle ? { ...handle.request, datasets: handle.datasets, cursor: null } : { ...req.search_request!, cursor: null };
    const state: ViewState = {
      view_id: newId('view'), name: req.name, kind: req.kind ?? 'materialized', from_search_id: handle?.search_id ?? null, search_request: request,
      record_count: 0, deleted_count: 0, total: { relation: 'eq', value: 0 }, created_at: now(),
      expires_at: req.expires_at ? new Date(req.expires_at).toISOString() : null, status: 'building',
    };
    if (state.kind === 'live') return this.createLive(caller, state);
    return this.createMaterialized(caller, state, handle ? { searchId: handle.search_id } : this.search.freeze(caller, request));
  }

  /** One run checks the request (a bad one is refused before anything is kept) and counts what it holds now. */
  private async createLive(caller: Caller, state: ViewState): Promise<View> {
    const first = await this.search.run(caller, { ...state.search_request, limit: 1 });
    const ready: ViewState = { ...state, record_count: first.total.value, total: first.total, status: 'ready' };
    await this.store.meta.put(stateKey(caller.tenant_id, ready.view_id), ready);
    return this.view(ready);
  }

  /** Nothing of a view that could not be made whole (over the cap, a full disk) is left behind. */
  private async createMaterialized(caller: Caller, state: ViewState, source: { searchId: string } | Frozen): Promise<View> {
    const t = caller.tenant_id;
    const id = state.view_id;
    this.building.add(`${t}/${id}`); // before the state is stored: the sweep must never see it as left over
    try {
      await this.store.meta.put(stateKey(t, id), state);
      const held = await materialize(this.store, t, id, this.search.all(caller, source, this.search.limits.maxAnswerRecords));
      // a deletion during the copy has counted what it took in the stored state
      const ready = await this.store.meta.transaction(() => {
        const made: ViewState = { ...this.store.meta.get(stateKey(t, id)), record_count: held, status: 'ready' };
        this.store.meta.put(stateKey(t, id), made);
        return made;
      });
      return this.view(ready);
    } catch (err) {
      await removeView(this.store, t, id).catch(() => {}); // what this could not remove, the sweep does
      throw err;
    } finally {
      this.building.delete(`${t}/${id}`);
    }
  }

  get(caller: Caller, viewId: string): View {
    return this.view(this.state(caller.tenant_id, viewId));
  }

  /** Newest first; the cursor is the last view of the page before. */
  list(caller: Caller, q: ViewListQuery): ViewList {
    const at = Date.now();
    const page = newestFirst<ViewState>(this.store.meta, keys.view(caller.tenant_id), q.cursor && listCursor(q.cursor), q.limit ?? LIST_LIMIT, (v) => answers(v, at));
    return { views: page.values.map((v) => this.view(v)), next_cursor: page.next };
  }

  /** Removes the view with every record it holds; answers it as it was. */
  async remove(caller: Caller, viewId: string): Promise<View> {
    const state = this.state(caller.tenant_id, viewId);
    await removeView(this.store, caller.tenant_id, viewId);
    return this.view(state);
  }

  async records(caller: Caller, viewId: string, q: ViewRecordsQuery): Promise<ViewRecords> {
    const state = this.state(caller.tenant_id, viewId);
    const page = state.kind === 'live' ? await this.livePage(caller, state, q) : this.storedPage(caller.tenant_id, state, q);
    return { view_id: state.view_id, kind: state.kind, expires_at: state.expires_at, returned: page.records.length, ...page };
  }

  /** A page of the stored copy, by position: `limit` records or `LIMITS.pageBytes` of them (at least one). */
  private storedPage(t: string, state: ViewState, q: ViewRecordsQuery): Omit<ViewRecords, 'view_id' | 'kind' | 'expires_at' | 'returned'> {
    const id = state.view_id;
    const limit = q.limit ?? RECORDS_LIMIT;
    const from = q.cursor ? recordsCursor.position(q.cursor, id) : 0;
    const records: Found['record'][] = [];
    let bytes = 0;
    for (const { key, value } of this.store.meta.getRange(prefixRange(keys.viewRecord(t, id), recordKey(t, id, from)))) {
      const size = JSON.stringify(value.record).length;
      if (records.length === limit || (records.length > 0 && bytes + size > LIMITS.pageBytes)) {
        return { total: this.view(state).total, records, next_cursor: recordsCursor.materialized(id, key[3] as number) };
      }
      records.push((value as Found).record);
      bytes += size;
    }
    return { total: this.view(state).total, records, next_cursor: null };
  }

  /** A page of one run of the request: its first page runs it, its cursor pages through that same run. */
  private async livePage(caller: Caller, state: ViewState, q: ViewRecordsQuery): Promise<Omit<ViewRecords, 'view_id' | 'kind' | 'expires_at' | 'returned'>> {
    const cursor = q.cursor ? recordsCursor.search(q.cursor, state.view_id) : null;
    const run = await this.search.run(caller, { ...state.search_request, limit: q.limit ?? RECORDS_LIMIT, cursor });
    return { total: run.total, records: run.records, next_cursor: run.next_cursor && recordsCursor.live(state.view_id, run.next_cursor) };
  }

  /**
   * Every record of a view, in its order, in batches (what an export of it writes): a materialized
   * view's copy as it stands, a batch per read; a live view's request run once more, up to the cap.
   */
  async *all(caller: Caller, viewId: string): AsyncGenerator<Found[]> {
    const t = caller.tenant_id;
    const state = this.state(t, viewId);
    if (state.kind === 'live') return yield* this.search.all(caller, this.search.freeze(caller, state.search_request), this.search.limits.maxAnswerRecords);
    for (let from = 0; ; ) {
      // `BATCH` records, or `LIMITS.pageBytes` of them (at least one): records may be large
      const batch: Found[] = [];
      let bytes = 0;
      let next = -1;
      for (const { key, value } of this.store.meta.getRange({ ...prefixRange(keys.viewRecord(t, viewId), recordKey(t, viewId, from)), limit: BATCH })) {
        if (batch.length > 0 && bytes >= LIMITS.pageBytes) break;
        batch.push(value as Found);
        bytes += JSON.stringify((value as Found).record).length;
        next = (key[3] as number) + 1;
      }
      if (batch.length > 0) yield batch;
      if (next < 0) return;
      from = next;
    }
  }

  /** Removes expired views, and what a stopped process left half made or half removed. */
  async sweep(nowMs = Date.now()): Promise<void> {
    for (const t of this.tenantIds()) {
      for (const { value } of [...scanPrefix<ViewState>(this.store.meta, keys.view(t))]) {
        const left = value.status === 'removing' || (value.status === 'building' && !this.building.has(`${t}/${value.view_id}`));
        if (left || expired(value, nowMs)) await removeView(this.store, t, value.view_id);
      }
    }
  }

  /** A view of this tenant that answers; any other (unknown, another tenant's, expired, unfinished) is 404. */
  private state(t: string, viewId: string): ViewState {
    const state: ViewState | undefined = this.store.meta.get(stateKey(t, viewId));
    if (!state || !answers(state)) throw new NotFound(`view '${viewId}' not found`);
    return state;
  }

  private view(state: ViewState): View {
    const view = toView(state);
    return state.kind === 'live' ? view : { ...view, total: { relation: 'eq', value: state.record_count - state.deleted_count } };
  }
}
