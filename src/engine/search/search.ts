import { availableParallelism } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SearchRequest, type ResultRecord, type SearchEnvelope, type SearchWarning } from '../../api/search.js';
import { validate } from '../../api/validate.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { LIMITS } from '../../api/limits.js';
import { Conflict, Invalid, NotFound, Refused } from '../errors.js';
import type { StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { analyze } from '../text/analyzer.js';
import { spent, timed } from '../timing.js';
import { snippets } from '../text/snippets.js';
import type { TextIndexes } from '../text/textIndexes.js';
import { createAggregator } from './aggregations.js';
import { fieldValue, TIME_ALIASES } from './fieldValue.js';
import { compileFilters, timeRange } from './filters.js';
import { decodeCursor, encodeCursor, invalidCursor, type Frozen, type HeldRanking, PackedRanking, type RankedHit, type SearchHandle, SearchHandles } from './handles.js';
import { NewestFirst, type SeqRun } from './newestFirst.js';
import { compileQuery } from './query.js';
import { fieldWarnings, namedFields } from './fieldWarnings.js';
import { Deadline } from './deadline.js';
import { Gate } from './gate.js';
import { partitionPoint } from '../text/partitionPoint.js';
import { newestMatches, seqsInTime } from './timeOrder.js';
import { compileSort, type SortHit, type Sorter } from './sort.js';
import { TopK } from './topK.js';
import { FUSION_NAME, SEMANTIC_DEPTH, type PreparedQuery, type SemanticSearch } from '../vector/semanticSearch.js';

export const DEFAULT_LIMIT = 20;
/** records a batch of `all` holds (and at most `LIMITS.pageBytes` of them) */
const BATCH = 500;
/** how long `all` may rank: it serves jobs and view creation, not a waiting page */
const LONG_MS = 30 * 60_000;
const NO_TERMS = new Set<string>();
const SCORE_KIND: Record<string, string> = { semantic: 'cosine', hybrid: FUSION_NAME };

/** `mode` wins; else `semantic: true` is hybrid when there is text, semantic when there is none. */
export function searchMode(req: SearchRequest): 'text' | 'semantic' | 'hybrid' {
  return req.mode ?? (req.semantic ? (req.text?.trim() ? 'hybrid' : 'semantic') : 'text');
}
export const DEFAULT_MAX_EXPANSION_TERMS = 50;

/** What an operator sets for searches (config.ts); read at each use. */
export interface SearchLimits {
  /** a search's deadline, in ms (SVC_SEARCH_TIMEOUT_MS, 10 s) */
  timeoutMs: number;
  /** the most records one materialized view or ranked export holds (SVC_VIEW_MAX_RECORDS, else `LIMITS.viewRecords`) */
  maxAnswerRecords: number;
}

interface Hit extends SortHit { rec?: StoredRecord; group?: string }
/** One record of an answer and where it lives: what views copy and exports write. */
export interface Found { dataset_id: string; seq: number; record: ResultRecord }
interface Ranking { ranking: HeldRanking; total: number; terms: Set<string>; scoreKind: string; mode: string; aggregations: Record<string, unknown>; cutoffs: number[]; now: number }
/** Which page of a search to answer; `replay` runs a search again for a cursor whose handle is gone. */
interface Page { offset: number; limit?: number; replay?: { search_id: string; cutoffs: number[]; now: number } }

const scopeRefused = (msg: string, input: unknown) => new Invalid(msg, [{ loc: ['body', 'datasets'], msg, type: 'value_error', input }]);

/** An image object ingested as one record (see ingest/image.ts): its metadata is what its header told. */
const isImageRecord = (rec: StoredRecord) =>
  typeof rec.metadata.content_type === 'string' && rec.metadata.content_type.startsWith('image/') && typeof rec.metadata.width === 'number' && typeof rec.metadata.height === 'number';

/** `content_filter`: which kind of content a search returns; null (the default) returns both. */
const CONTENT_FILTERS: Record<string, (rec: StoredRecord) => boolean> = {
  text: (rec) => !isImageRecord(rec),
  image: isImageRecord,
};

/**
 * Search over a tenant's datasets: one request shape in, one envelope out. Every match is counted
 * and aggregated; the best `LIMITS.rankingDepth` of them are kept, in memory, for the pages —
 * best by score, newest first without scoring text, or first by the request's `sort`. A text
 * search ranks by its sort; a semantic or hybrid one ranks by relevance and sorts that ranking.
 * Newest first with nothing to score or test is read a page at a time instead (newestFirst.ts).
 */
export class Search {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly text: TextIndexes,
    private readonly handles: SearchHandles,
    private readonly vectors: SemanticSearch | undefined,
    readonly limits: SearchLimits,
  ) {}

  /** searches working at once: about one per core keeps the event loop's turns short */
  private readonly gate = new Gate(Math.max(2, availableParallelism()));

  /**
   * Every mode. Semantic and hybrid searches embed the query first — the one step that may wait on
   * an embedding provider — and then rank like a text search does.
   */
  async run(caller: Caller, req: SearchRequest): Promise<SearchEnvelope> {
    if (req.cursor) return this.next(caller, req.cursor, req.limit);
    return this.start(caller.tenant_id, req, this.scope(caller.tenant_id, req), { offset: 0 });
  }

  private async start(t: string, req: SearchRequest, scope: string[], at: Page): Promise<SearchEnvelope> {
    const mode = searchMode(req);
    if (mode === 'text' || !this.vectors) return this.first(t, req, scope, performance.now(), at);
    if (req.text?.trim()) await this.vectors.catchUp(t, scope); // not part of the search's own time (took_ms)
    const started = performance.now();
    const prepared = await this.vectors.prepare(t, scope, req, mode);
    return this.first(t, req, scope, started, at, prepared);
  }

  /** The next page: from the handle when this process still has it, else by running the frozen search again. */
  private async next(caller: Caller, cursor: string, limit?: number): Promise<SearchEnvelope> {
    const started = performance.now();
    const t = caller.tenant_id;
    const state = decodeCursor(cursor);
    const handle = this.handles.get(t, state.s);
    // a cursor that carries its search pages only through a handle of that same search
    if (handle && (!state.f || sameSearch(handle, state.f))) return this.page(t, handle, state.o, limit ?? handle.request.limit ?? DEFAULT_LIMIT, started);
    if (!state.f) throw invalidCursor(cursor)('cursor expired or unknown: run the search again (a search is kept in memory for an hour at most)');
    const request = validate(SearchRequest, state.f.request);
    const datasets = this.scope(t, { datasets: state.f.datasets });
    if (datasets.length !== state.f.datasets.length) throw invalidCursor(cursor)('malformed cursor');
    return this.start(t, request, datasets, { offset: state.o, limit, replay: { search_id: state.s, cutoffs: state.f.cutoffs, now: state.f.now } });
  }

  /**
   * The datasets a request searches. `dataset_scope: "selected"` searches exactly `datasets` (one at
   * least); `"all"` every dataset of the tenant (and names none). Without a scope, `datasets` when
   * it names any, else all.
   */
  private scope(t: string, request: SearchRequest): string[] {
    const named = request.datasets?.length ?? 0;
    const scope = request.dataset_scope;
    if (scope === 'selected' && named === 0) throw scopeRefused("dataset_scope 'selected' searches the datasets named in datasets: name at least one", request.datasets ?? []);
    if (scope === 'all' && named > 0) throw scopeRefused("dataset_scope 'all' searches every dataset of the tenant: leave datasets empty, or use dataset_scope 'selected'", request.datasets);
    const datasetIds = named ? [...new Set(request.datasets)] : this.datasets.ids(t);
    for (const d of datasetIds) this.datasets.state(t, d);
    return datasetIds;
  }

  private async first(t: string, request: SearchRequest, datasetIds: string[], started: number, at: Page, prepared?: PreparedQuery): Promise<SearchEnvelope> {
    const deadline = new Deadline(this.limits.timeoutMs);
    const leave = await this.gate.enter(deadline);
    try {
      return await this.collect(t, request, datasetIds, started, at, deadline, prepared);
    } finally {
      leave();
    }
  }

  private async collect(t: string, request: SearchRequest, datasetIds: string[], started: number, at: Page, deadline: Deadline, prepared?: PreparedQuery): Promise<SearchEnvelope> {
    const limit = at.limit ?? request.limit ?? DEFAULT_LIMIT;
    const r = await this.rank(t, request, datasetIds, at, LIMITS.rankingDepth, deadline, prepared);
    const page = this.results(t, datasetIds, r.ranking.hits(at.offset, at.offset + limit), r.scoreKind, r.terms);
    const end = at.offset + page.used;
    const handle = this.handles.create(
      t,
      { request, datasets: datasetIds, mode: r.mode, score_kind: r.scoreKind, terms: [...r.terms], aggregations: r.aggregations, total: r.total, ranked: r.ranking.length, cutoffs: r.cutoffs, now: r.now },
      r.ranking,
      at.replay?.search_id,
    );
    return this.envelope(t, handle, page.records, r.ranking.length > end ? encodeCursor(handle, end) : null, started);
  }

  /** Every match of the request counted and aggregated; the best `depth` of them ranked. */
  private async rank(t: string, request: SearchRequest, datasetIds: string[], at: Page, depth: number, deadline: Deadline, prepared?: PreparedQuery): Promise<Ranking> {
    const limit = at.limit ?? request.limit ?? DEFAULT_LIMIT;
    const mode = searchMode(request);
    if (mode !== 'text' && !prepared) throw new Conflict(`a ${mode} search embeds its query first: call run()`);
    const now = at.replay?.now ?? Date.now();
    // read once: a dataset deleted while the search runs loses its records, not the search
    const states = datasetIds.map((d) => this.datasets.state(t, d));
    const cutoffs = at.replay?.cutoffs ?? states.map((s) => s.seq);
    const plan = this.plan(request, now);
    const { filter, query, aggregator, terms, scoringText, text, timeBounds, timeOnly, runOnly, needRecord, accept, sorter } = plan;
    // a text search ranks by its sort; semantic and hybrid ones rank by relevance, and their ranking is sorted after
    const textSorter = mode === 'text' ? sorter : null;
    const collapse = request.collapse?.field;
    const groups = collapse ? new Set<string>() : null;
    // every accepted match is seen once, whether or not it stays in the ranking; the ranking keeps
    // no record (10,000 of them could be gigabytes): a page reads its own again
    const seen = (h: Hit): Hit => {
      aggregator?.add(h.rec!);
      if (collapse) groups!.add((h.group = groupOf(h.rec!, collapse)));
      if (sorter?.readsRecords) h.keys = sorter.valuesOf(h.rec);
      h.rec = undefined;
      return h;
    };
    const top = new TopK<Hit>(depth, textSorter ? textSorter.before : better);
    // with nothing to score, and nothing to test beyond a run of seqs (runOnly), a dataset's matches are its run when
    // its time filter is one (or it has none) and it is counted now, and they rank newest by seq first unless a sort says
    // otherwise: newest by time is that where time follows seq
    const exact = (ds: number) => !scoringText && runOnly && cutoffs[ds] === states[ds].seq && (states[ds].time_ordered || !timeBounds);
    const bySeq = (ds: number) => !textSorter || (textSorter.newestByTime && states[ds].time_ordered);
    // when every dataset's are, the ranking is the runs one after another, read as its pages ask (newestFirst.ts)
    const runs: SeqRun[] | null = mode === 'text' && (!textSorter || datasetIds.length === 1) && datasetIds.every((_, ds) => exact(ds) && bySeq(ds)) ? [] : null;
    // one dataset whose worker ranked it: its order is the ranking's, with no heap to go through
    let ranking: Hit[] | null = null;
    let total = 0;
    const textSeqs: Float64Array[] = [];

    if (mode !== 'semantic') {
      for (let ds = 0; ds < datasetIds.length; ds++) {
        const d = datasetIds[ds];
        const options = { maxExpansions: request.max_expansion_terms ?? DEFAULT_MAX_EXPANSION_TERMS, extra: prepared?.expansion, deadline: deadline.at };
        // without a test per record, the worker keeps the ranking itself and sends only its top
        const ranksItself = mode === 'text' && !needRecord && !at.replay && !sorter;
        const cutoff = cutoffs[ds];
        const state = states[ds];
        // on a dataset in time order the time filter is a run of seqs [from, to): nothing outside it is read
        const run = timeBounds && state.time_ordered ? seqsInTime(this.store, t, d, cutoff, timeBounds.lo, timeBounds.hi) : { from: 0, to: cutoff + 1 };
        const found = scoringText ? await timed('index', () => this.text.search(t, d, scoringText, { ...options, top: ranksItself ? depth : undefined }, deadline.ms)) : null;
        for (const term of found?.terms ?? []) terms.add(term);
        // what the text index held is what this search saw: records committed after it are not in it
        if (found && !at.replay) cutoffs[ds] = Math.min(cutoffs[ds], found.seq);
        if (text) {
          textSeqs[ds] = found!.seqs;
          if (ranksItself) total += found!.total - found!.seqs.length;
          if (ranksItself && datasetIds.length === 1) ranking = [];
          if (textSorter?.newestByTime && runOnly && state.time_ordered) {
            // where time follows seq, only the newest matches (and their ties by time) can rank: only their records are read
            const newest = await newestMatches(this.store, t, d, found!, run, cutoff, depth, deadline);
            for (const m of newest.matches) top.push(seen({ ds, seq: m.seq, score: m.score, rec: m.rec }));
            total += newest.count;
            continue;
          }
          for (let i = 0; i < found!.seqs.length; i++) {
            if (deadline.due()) await deadline.pause(); // first: a record the filters refuse goes on to the next one
            const seq = found!.seqs[i];
            if (seq < run.from || seq >= run.to) continue;
            const rec = needRecord ? this.store.records.get([t, d, seq]) : undefined;
            if (needRecord && !(rec && accept(rec))) continue;
            const hit: Hit = { ds, seq, score: found!.scores[i], rec };
            total++;
            if (ranking) ranking.push(hit);
            else top.push(needRecord ? seen(hit) : hit);
          }
          continue;
        }
        // no text: every record, newest first; the free terms of q (if any) give it a score
        const score = found ? scoreLookup(found.seqs, found.scores) : () => 0;
        const range = { start: [t, d, run.to - 1], end: [t, d, run.from - 1], reverse: true };
        const count = () => (timeOnly ? this.store.records.getKeysCount({ start: [t, d, run.from], end: [t, d, run.to] }) : state.record_count);
        if (exact(ds) && bySeq(ds)) {
          // the newest `depth` of the run; records read only for a sort, whose times order several datasets together
          const within = { ...range, limit: depth };
          if (runs) runs.push({ ds, dataset_id: d, ...run });
          else if (textSorter) for (const { value: rec } of this.store.records.getRange(within)) top.push(seen({ ds, seq: rec.seq, score: 0, rec }));
          else for (const key of this.store.records.getKeys(within)) top.push({ ds, seq: key[2] as number, score: 0 });
          total += timeOnly ? this.store.records.getKeysCount({ start: [t, d, run.from], end: [t, d, run.to] }) : state.record_count;
          continue;
        }
        if (!needRecord) {
          for (const key of this.store.records.getKeys(range)) {
            top.push({ ds, seq: key[2] as number, score: 0 });
            total++;
            if (deadline.due()) await deadline.pause();
          }
          continue;
        }
        for (const { value: rec } of this.store.records.getRange(range)) {
          if (accept(rec)) {
            top.push(seen({ ds, seq: rec.seq, score: score(rec.seq), rec }));
            total++;
          }
          if (deadline.due()) await deadline.pause();
        }
      }
    }

    deadline.check(); // however few pauses it took
    if (runs) return { ranking: new NewestFirst(this.store, t, runs, Math.min(depth, total)), total, terms, scoreKind: 'none', mode, aggregations: {}, cutoffs, now };
    let hits = ranking ?? (await top.drain(deadline));
    if (prepared) {
      const k = Math.max(limit, SEMANTIC_DEPTH);
      const vector = this.vectors!.vectorHits(t, datasetIds, prepared, { k, where: request.where, accept: needRecord ? accept : undefined, minScore: request.semantic_min_score })
        .filter((h) => h.seq <= cutoffs[h.ds]);
      // in hybrid, a vector hit that is no text match adds to the total
      const added = mode === 'semantic' ? vector : vector.filter((h) => !textSeqs[h.ds] || indexOfSeq(textSeqs[h.ds], h.seq) < 0);
      if (needRecord) for (const h of added) seen(h);
      total = mode === 'semantic' ? vector.length : total + added.length;
      hits = (mode === 'semantic' ? vector : this.vectors!.fuse(hits, vector)).sort(byRank).slice(0, depth);
      if (sorter) hits = await this.sortRanking(t, datasetIds, hits, sorter, deadline);
    }
    if (collapse) {
      hits = collapseHits(hits, collapse);
      total = groups!.size;
    }
    const scoreKind = SCORE_KIND[mode] ?? (scoringText ? 'bm25' : 'none');
    return { ranking: new PackedRanking(hits), total, terms, scoreKind, mode, aggregations: aggregator?.result() ?? {}, cutoffs, now };
  }

  /**
   * A semantic or hybrid ranking in the order of its sort: the mode picks the records (the best by
   * relevance), the sort orders them; ties keep their rank.
   */
  private async sortRanking(t: string, datasetIds: string[], hits: Hit[], sorter: Sorter, deadline: Deadline): Promise<Hit[]> {
    if (sorter.readsRecords) {
      for (const h of hits) {
        h.keys ??= sorter.valuesOf(h.rec ?? this.store.records.get([t, datasetIds[h.ds], h.seq]));
        if (deadline.due()) await deadline.pause();
      }
    }
    return hits.sort((a, b) => (sorter.before(a, b) ? -1 : sorter.before(b, a) ? 1 : 0));
  }

  /** What a request tests and scores; `accept` is the test of one record. */
  private plan(request: SearchRequest, now: number) {
    const filter = compileFilters(request.where, request.time, new Date(now));
    const query = request.q?.trim() ? compileQuery(request.q) : null;
    const aggregator = request.aggregations?.length ? createAggregator(request.aggregations) : null;
    const text = request.text?.trim() ?? '';
    const scoringText = [text, query?.scoringText ?? ''].join(' ').trim();
    const terms = new Set(analyze(scoringText));
    if (terms.size > LIMITS.queryTerms) throw tooManyTerms(terms.size);
    const mode = searchMode(request);
    // null when the sort orders as the default does: such a search keeps the default's ways
    const sorter = compileSort(request.sort, mode !== 'text' || Boolean(scoringText), better);
    // a text search sorted by a record field reads every match's record; a semantic or hybrid one only those of its ranking
    const content = request.content_filter ? CONTENT_FILTERS[request.content_filter] : null;
    const others = Boolean(query || aggregator || content || request.collapse?.field);
    const tests = Boolean(filter) || others;
    // a filter on the record's time: on a dataset in time order, a run of seqs (see timeOrder.ts)
    const bounds = request.time ? timeRange(request.time, new Date(now)) : null;
    const timeBounds = bounds && TIME_ALIASES.has(bounds.field) ? bounds : null;
    const timeOnly = Boolean(timeBounds) && !request.where?.length && !others;
    // on a dataset in time order every record of the run of seqs matches: none needs a test
    const runOnly = !tests || timeOnly;
    const needRecord = tests || (mode === 'text' && Boolean(sorter?.readsRecords));
    const accept = (rec: StoredRecord) => (!content || content(rec)) && (!query || query.matches(rec)) && (!filter || filter(rec));
    return { filter, query, aggregator, text, scoringText, terms, timeBounds, timeOnly, runOnly, needRecord, accept, sorter };
  }

  private page(t: string, handle: SearchHandle, offset: number, limit: number, started: number): SearchEnvelope {
    const ranking = this.handles.ranking(t, handle.search_id);
    const page = this.results(t, handle.datasets, ranking?.hits(offset, offset + limit) ?? [], handle.score_kind, new Set(handle.terms));
    const end = offset + page.used;
    return this.envelope(t, handle, page.records, end < (ranking?.length ?? 0) ? encodeCursor(handle, end) : null, started);
  }

  /**
   * The result records of `hits`, in order, until the page holds `LIMITS.pageBytes` (at least one
   * record); `used` says how many hits that took, so that the next page starts after them. A
   * record deleted or replaced since the search first ran is no longer there to show.
   */
  private results(t: string, datasets: string[], hits: Hit[], scoreKind: string, terms: Set<string>): { records: ResultRecord[]; used: number } {
    const { found, used } = this.found(t, datasets, hits, scoreKind, terms);
    return { records: found.map((f) => f.record), used };
  }

  private found(t: string, datasets: string[], hits: Hit[], scoreKind: string, terms: Set<string>): { found: Found[]; used: number } {
    const found: Found[] = [];
    let bytes = 0;
    let used = 0;
    let reading = 0;
    let shaping = 0;
    for (const h of hits) {
      const d = datasets[h.ds];
      const at = performance.now();
      const rec = h.rec ?? this.store.records.get([t, d, h.seq]);
      const read = performance.now();
      reading += read - at;
      if (rec) {
        const size = recordBytes(rec);
        if (found.length > 0 && bytes + size > LIMITS.pageBytes) break;
        bytes += size;
        found.push({ dataset_id: d, seq: h.seq, record: toResult(t, d, rec, h.score, scoreKind, terms) });
        shaping += performance.now() - read;
      }
      used++;
    }
    spent('records', reading);
    spent('snippets', shaping); // the result's shape, its snippets most of it
    return { found, used };
  }

  /** The handle of a search this process still holds; 404 once it expired. */
  handle(caller: Caller, searchId: string): SearchHandle {
    const handle = this.handles.get(caller.tenant_id, searchId);
    if (!handle) throw new NotFound(`search '${searchId}' not found: it expired or is unknown (a search is kept in memory for an hour at most): run it again`);
    return handle;
  }

  /** Refuses a request that could not run (its q, its filters, its terms) without running it: for work that runs it later. */
  check(request: SearchRequest): void {
    this.plan(request, Date.now());
  }

  /** Whether `all` ranks the request (holding a hit a match, up to its cap) rather than streaming it from the store in flat memory. */
  ranks(request: SearchRequest): boolean {
    const plan = this.plan(request, Date.now());
    return ranked(request, plan.scoringText, plan.sorter);
  }

  /** A request as it would run now — its datasets, their last records, the time — for running it later exactly so. */
  freeze(caller: Caller, request: SearchRequest): Frozen {
    const datasets = this.scope(caller.tenant_id, request);
    return { request: { ...request, cursor: null }, datasets, cutoffs: datasets.map((d) => this.datasets.state(caller.tenant_id, d).seq), now: Date.now() };
  }

  /**
   * Every record of an answer, in the search's order, in batches: what the pages of a search handle
   * hold, or every match of a (frozen) request — at most `max`: more is refused naming the cap, never cut.
   * A request without scoring text or a sort streams straight from the store, newest first, in flat
   * memory; one with either holds its ranking (a hit object, about 60 bytes, a match, and its sort
   * values) while its records stream.
   * `deadlineMs` bounds the reading (default 30 minutes; a cancellable job passes Infinity).
   */
  async *all(caller: Caller, source: { searchId: string } | Frozen, max: number, opts: { deadlineMs?: number } = {}): AsyncGenerator<Found[]> {
    const t = caller.tenant_id;
    if ('searchId' in source) {
      const h = this.handle(caller, source.searchId);
      const ranking = this.handles.ranking(t, h.search_id);
      if (ranking) yield* this.batches(t, h.datasets, ranking, h.score_kind, new Set(h.terms));
      return;
    }
    const { request, datasets, cutoffs, now } = source;
    this.scope(t, { datasets }); // each still there
    const mode = searchMode(request);
    const plan = this.plan(request, now);
    const deadline = new Deadline(opts.deadlineMs ?? LONG_MS);
    if (!ranked(request, plan.scoringText, plan.sorter)) return yield* this.scan(t, source, plan.needRecord ? plan.accept : null, max, deadline);
    const prepared = mode === 'text' || !this.vectors ? undefined : await this.vectors.prepare(t, datasets, request, mode);
    const leave = await this.gate.enter(deadline);
    let r: Ranking;
    try {
      r = await this.rank(t, request, datasets, { offset: 0, replay: { search_id: '', cutoffs, now } }, max + 1, deadline, prepared);
    } finally {
      leave();
    }
    if (r.ranking.length > max) throw tooMany(max);
    yield* this.batches(t, datasets, r.ranking, r.scoreKind, r.terms);
  }

  private async *batches(t: string, datasets: string[], ranking: HeldRanking, scoreKind: string, terms: Set<string>): AsyncGenerator<Found[]> {
    for (let i = 0; i < ranking.length; ) {
      const { found, used } = this.found(t, datasets, ranking.hits(i, i + BATCH), scoreKind, terms);
      i += used;
      if (found.length > 0) yield found;
      await nextTurn(); // a consumer whose writes resolve at once would otherwise never let the loop turn
    }
  }

  /** Unscored matches in the search's own order (dataset by dataset, newest first), a batch per read transaction. */
  private async *scan(t: string, f: Frozen, accept: ((rec: StoredRecord) => boolean) | null, max: number, deadline: Deadline): AsyncGenerator<Found[]> {
    let n = 0;
    for (let ds = 0; ds < f.datasets.length; ds++) {
      const d = f.datasets[ds];
      for (let from = f.cutoffs[ds]; from > 0; ) {
        const batch: Found[] = [];
        let bytes = 0;
        let last = 0;
        for (const { value: rec } of this.store.records.getRange({ start: [t, d, from], end: [t, d, 0], reverse: true })) {
          last = rec.seq;
          if (!accept || accept(rec)) {
            if (++n > max) throw tooMany(max);
            batch.push({ dataset_id: d, seq: rec.seq, record: toResult(t, d, rec, 0, 'none', NO_TERMS) });
            bytes += recordBytes(rec);
          }
          if (batch.length >= BATCH || bytes >= LIMITS.pageBytes || deadline.due()) break;
        }
        from = last > 0 ? last - 1 : 0;
        yield batch; // even empty: a reader checks between batches whether it should stop
        await deadline.pause();
      }
    }
  }

  /** What a search names that none of its datasets has (`level` where they have `Level`): each page says so. */
  private fieldWarnings(t: string, handle: SearchHandle): SearchWarning[] {
    const request = handle.request;
    const qFields = request.q?.trim() ? compileQuery(request.q).fields : [];
    return fieldWarnings(this.store, t, handle.datasets, namedFields(request, qFields));
  }

  private envelope(t: string, handle: SearchHandle, records: ResultRecord[], next: string | null, started: number): SearchEnvelope {
    const warnings: SearchWarning[] = this.fieldWarnings(t, handle);
    if (handle.ranked < handle.total) {
      warnings.push({ code: 'ranking_truncated', message: `pages stop after the first ${handle.ranked} of ${handle.total} records: narrow the search to page through the rest, or export it (POST /v1/export, svc export create) to get every one` });
    }
    return {
      search_id: handle.search_id,
      took_ms: Math.round((performance.now() - started) * 100) / 100,
      mode: handle.mode,
      total: { relation: 'eq', value: handle.total },
      records,
      aggregations: handle.aggregations,
      next_cursor: next,
      ...(warnings.length > 0 && { warnings }),
    };
  }
}

/** A request is ranked unless it is a text search without scoring text, collapse or a sort of its own: that one streams in the store's order. */
const ranked = (request: SearchRequest, scoringText: string, sorter: Sorter | null) => searchMode(request) !== 'text' || Boolean(scoringText) || Boolean(request.collapse) || sorter !== null;

const sameSearch = (h: SearchHandle, f: Frozen) =>
  JSON.stringify([h.request, h.datasets, h.cutoffs, h.now]) === JSON.stringify([{ ...f.request, cursor: null }, f.datasets, f.cutoffs, f.now]);

/** Best first: by score, then the earlier dataset of the request, then the newer record. */
const better = (a: RankedHit, b: RankedHit) => a.score > b.score || (a.score === b.score && (a.ds < b.ds || (a.ds === b.ds && a.seq > b.seq)));
const byRank = (a: RankedHit, b: RankedHit) => (better(a, b) ? -1 : better(b, a) ? 1 : 0);

const groupOf = (rec: StoredRecord, field: string) => JSON.stringify(fieldValue(rec, field) ?? null);

/** The best hit of each group; every group's best hit is in the ranking when any of its hits is. */
function collapseHits(hits: Hit[], field: string): Hit[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = h.group ?? groupOf(h.rec!, field);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Where `seq` is among seqs in ascending order, or -1. */
function indexOfSeq(seqs: Float64Array, seq: number): number {
  const at = partitionPoint(0, seqs.length, (k) => seqs[k] < seq);
  return seqs[at] === seq ? at : -1;
}

/** The score of a seq among matches in ascending seq order (0 when it is not one). */
const scoreLookup = (seqs: Float64Array, scores: Float64Array) => (seq: number) => {
  const i = indexOfSeq(seqs, seq);
  return i < 0 ? 0 : scores[i];
};

const recordBytes = (rec: StoredRecord) => rec.body.length + (rec.title?.length ?? 0) + JSON.stringify(rec.metadata).length;

const tooMany = (max: number) =>
  new Refused(`the answer holds more than ${max.toLocaleString('en-US')} records, the most one view or ranked export may hold: narrow the search`, 'too_many_records', 422);

const tooManyTerms = (n: number) => {
  const msg = `the search looks up ${n} distinct terms; at most ${LIMITS.queryTerms}`;
  return new Invalid(msg, [{ loc: ['body', 'text'], msg, type: 'value_error' }]);
};

export function toResult(tenantId: string, datasetId: string, rec: StoredRecord, score: number, scoreKind: string, terms: Set<string>): ResultRecord {
  return {
    id: rec.id,
    title: rec.title,
    body: rec.body,
    metadata: rec.metadata,
    score,
    score_kind: scoreKind,
    snippets: snippets(rec.body, terms),
    created_at: rec.created_at,
    time: rec.time,
    provenance: {
      dataset_id: datasetId,
      tenant_id: tenantId,
      source_bucket: rec.bucket,
      source_key: rec.key,
      source_etag: rec.etag,
      line: rec.line,
      transform_version: rec.transform_version,
    },
  };
}
