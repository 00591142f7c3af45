import type { ResultRecord, SearchEnvelope, SearchRequest } from '../../api/search.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict } from '../errors.js';
import type { StoredRecord } from '../records.js';
import type { Store } from '../store/db.js';
import { analyze } from '../text/analyzer.js';
import { snippets } from '../text/snippets.js';
import type { TextIndexes } from '../text/textIndexes.js';
import { createAggregator } from './aggregations.js';
import { fieldValue } from './fieldValue.js';
import { compileFilters } from './filters.js';
import { decodeCursor, encodeCursor, type RankedHit, type SearchHandle, SearchHandles } from './handles.js';
import { compileQuery } from './query.js';
import { FUSION_NAME, SEMANTIC_DEPTH, type PreparedQuery, type SemanticSearch } from '../vector/semanticSearch.js';

export const DEFAULT_LIMIT = 20;
const SCORE_KIND: Record<string, string> = { semantic: 'cosine', hybrid: FUSION_NAME };

/** `mode` wins; else `semantic: true` is hybrid when there is text, semantic when there is none. */
export function searchMode(req: SearchRequest): 'text' | 'semantic' | 'hybrid' {
  return req.mode ?? (req.semantic ? (req.text?.trim() ? 'hybrid' : 'semantic') : 'text');
}
export const DEFAULT_MAX_EXPANSION_TERMS = 50;

interface Hit extends RankedHit { rec?: StoredRecord }

/**
 * Text search over a tenant's datasets: one request shape in, one envelope out. The first page
 * ranks every match; when there are more pages the ranking is frozen in the search handle and
 * each cursor reads the next slice of it.
 */
export class Search {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly text: TextIndexes,
    private readonly handles: SearchHandles,
    private readonly vectors?: SemanticSearch,
  ) {}

  /**
   * Every mode. Semantic and hybrid searches embed the query first — the one step that may wait on
   * an embedding provider — and then rank like a text search does.
   */
  async run(caller: Caller, req: SearchRequest): Promise<SearchEnvelope> {
    const mode = searchMode(req);
    if (req.cursor || mode === 'text' || !this.vectors) return this.search(caller, req);
    const scope = this.scope(caller.tenant_id, req);
    if (req.text?.trim()) await this.vectors.catchUp(caller.tenant_id, scope); // not part of the search's own time (took_ms)
    const started = performance.now();
    const prepared = await this.vectors.prepare(caller.tenant_id, scope, req, mode);
    return this.first(caller.tenant_id, req, scope, started, prepared);
  }

  async search(caller: Caller, req: SearchRequest): Promise<SearchEnvelope> {
    const started = performance.now();
    if (req.cursor) {
      const { handle, offset } = decodeCursor(this.handles, caller.tenant_id, req.cursor);
      return this.page(caller.tenant_id, handle, offset, req.limit ?? handle.request.limit ?? DEFAULT_LIMIT, started);
    }
    return this.first(caller.tenant_id, req, this.scope(caller.tenant_id, req), started);
  }

  private scope(t: string, request: SearchRequest): string[] {
    const datasetIds = request.datasets?.length ? [...new Set(request.datasets)] : this.datasets.ids(t);
    for (const d of datasetIds) this.datasets.state(t, d);
    return datasetIds;
  }

  private async first(t: string, request: SearchRequest, datasetIds: string[], started: number, prepared?: PreparedQuery): Promise<SearchEnvelope> {
    const limit = request.limit ?? DEFAULT_LIMIT;
    const mode = searchMode(request);
    if (mode !== 'text' && !prepared) throw new Conflict(`a ${mode} search embeds its query first: call run()`);

    const filter = compileFilters(request.where, request.time, new Date());
    const query = request.q?.trim() ? compileQuery(request.q) : null;
    const aggregator = request.aggregations?.length ? createAggregator(request.aggregations) : null;
    const text = request.text?.trim() ?? '';
    const scoringText = [text, query?.scoringText ?? ''].join(' ').trim();
    const needRecord = Boolean(filter || query || aggregator || request.collapse);
    const accept = (rec: StoredRecord) => (!query || query.matches(rec)) && (!filter || filter(rec));
    const maxExpansions = request.max_expansion_terms ?? DEFAULT_MAX_EXPANSION_TERMS;

    let hits: Hit[] = [];
    const terms = new Set(analyze(scoringText));
    const expansion = prepared?.expansion;
    if (mode !== 'semantic') {
      const results = await Promise.all(datasetIds.map((d) => (scoringText ? this.text.search(t, d, scoringText, maxExpansions, expansion) : null)));
      datasetIds.forEach((d, ds) => {
        const found = results[ds];
        for (const term of found?.terms ?? []) terms.add(term);
        if (text) {
          for (let i = 0; i < found!.seqs.length; i++) {
            const seq = found!.seqs[i];
            const rec = needRecord ? this.store.records.get([t, d, seq]) : undefined;
            if (!needRecord || (rec && accept(rec))) hits.push({ ds, seq, score: found!.scores[i], rec });
          }
          return;
        }
        const range = { start: [t, d, Number.MAX_SAFE_INTEGER], end: [t, d, 0], reverse: true };
        if (!needRecord) {
          for (const key of this.store.records.getKeys(range)) hits.push({ ds, seq: key[2] as number, score: 0 });
          return;
        }
        const scores = new Map<number, number>();
        found?.seqs.forEach((seq, i) => scores.set(seq, found.scores[i]));
        for (const { value: rec } of this.store.records.getRange(range)) {
          if (accept(rec)) hits.push({ ds, seq: rec.seq, score: scores.get(rec.seq) ?? 0, rec });
        }
      });
    }

    if (prepared) {
      const k = Math.max(limit, SEMANTIC_DEPTH);
      const vector = this.vectors!.vectorHits(t, datasetIds, prepared, { k, where: request.where, accept: needRecord ? accept : undefined, minScore: request.semantic_min_score });
      hits = mode === 'semantic' ? vector : this.vectors!.fuse(hits, vector);
    }
    hits.sort((a, b) => b.score - a.score || a.ds - b.ds || b.seq - a.seq);
    if (aggregator) for (const h of hits) aggregator.add(h.rec!);
    if (request.collapse) hits = collapseHits(hits, request.collapse.field);

    const more = hits.length > limit;
    const handle = this.handles.create(
      t,
      { request, datasets: datasetIds, mode, score_kind: SCORE_KIND[mode] ?? (scoringText ? 'bm25' : 'none'), terms: [...terms], aggregations: aggregator?.result() ?? {}, total: hits.length },
      more ? hits.map(({ ds, seq, score }) => ({ ds, seq, score })) : undefined,
    );
    return this.envelope(t, handle, hits.slice(0, limit), more ? encodeCursor(handle.search_id, limit) : null, started);
  }

  private page(t: string, handle: SearchHandle, offset: number, limit: number, started: number): SearchEnvelope {
    const hits = this.handles.hits(t, handle.search_id, offset, offset + limit);
    const next = offset + limit < handle.total ? encodeCursor(handle.search_id, offset + limit) : null;
    return this.envelope(t, handle, hits, next, started);
  }

  private envelope(t: string, handle: SearchHandle, hits: Hit[], next: string | null, started: number): SearchEnvelope {
    const terms = new Set(handle.terms);
    const records = hits.flatMap((h) => {
      const d = handle.datasets[h.ds];
      // a record deleted or replaced since the search was first run is no longer there to show
      const rec = h.rec ?? this.store.records.get([t, d, h.seq]);
      return rec ? [toResult(t, d, rec, h.score, handle.score_kind, terms)] : [];
    });
    return {
      search_id: handle.search_id,
      took_ms: Math.round((performance.now() - started) * 100) / 100,
      mode: handle.mode,
      total: { relation: 'eq', value: handle.total },
      records,
      aggregations: handle.aggregations,
      next_cursor: next,
    };
  }

}

function collapseHits(hits: Hit[], field: string): Hit[] {
  const seen = new Set<string>();
  return hits.filter((h) => {
    const key = JSON.stringify(fieldValue(h.rec!, field) ?? null);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

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
