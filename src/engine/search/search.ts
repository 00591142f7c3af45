import type { ResultRecord, SearchEnvelope, SearchRequest } from '../../api/search.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import { Conflict } from '../errors.js';
import type { StoredRecord } from '../records.js';
import type { Sources } from '../sources/sources.js';
import type { Store } from '../store/db.js';
import { analyze } from '../text/analyzer.js';
import { snippets } from '../text/snippets.js';
import type { TextIndexes } from '../text/textIndexes.js';
import { createAggregator, validateAggregations } from './aggregations.js';
import { fieldValue } from './fieldValue.js';
import { compileFilters } from './filters.js';
import { decodeCursor, encodeCursor, SearchHandles } from './handles.js';
import { compileQuery } from './query.js';

export const DEFAULT_LIMIT = 20;
export const DEFAULT_MAX_EXPANSION_TERMS = 50;

interface Hit { ds: number; seq: number; score: number; terms?: string[]; rec?: StoredRecord }

/** Text search over a tenant's datasets: one request shape in, one envelope out. */
export class Search {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly text: TextIndexes,
    private readonly handles: SearchHandles,
  ) {}

  search(caller: Caller, req: SearchRequest): SearchEnvelope {
    const started = performance.now();
    const t = caller.tenant_id;
    const continued = req.cursor ? decodeCursor(this.handles, t, req.cursor) : null;
    const request: SearchRequest = continued ? { ...continued.handle.request, limit: req.limit ?? continued.handle.request.limit } : req;
    const offset = continued?.offset ?? 0;
    const limit = request.limit ?? DEFAULT_LIMIT;

    const datasetIds = request.datasets?.length ? [...new Set(request.datasets)] : this.datasets.ids(t);
    const states = datasetIds.map((d) => this.datasets.state(t, d));
    const mode = request.mode ?? (request.semantic ? (request.text?.trim() ? 'hybrid' : 'semantic') : 'text');
    if (mode !== 'text') throw new Conflict(`semantic search is not available: no dataset among ${datasetIds.map((d) => `'${d}'`).join(', ')} has vectors`);

    const filter = compileFilters(request.where, request.time, new Date());
    const query = request.q?.trim() ? compileQuery(request.q) : null;
    if (request.aggregations?.length) validateAggregations(request.aggregations);
    const aggregator = request.aggregations?.length ? createAggregator(request.aggregations) : null;
    const collapse = request.collapse?.field;
    const text = request.text?.trim() ?? '';
    const scoringText = [text, query?.scoringText ?? ''].join(' ').trim();
    const maxExpansions = request.max_expansion_terms ?? DEFAULT_MAX_EXPANSION_TERMS;
    const needRecord = Boolean(filter || query || aggregator || collapse);
    const accept = (rec: StoredRecord) => (!query || query.matches(rec)) && (!filter || filter(rec));
    const hwm = continued?.handle.hwm ?? Object.fromEntries(states.map((s) => [s.dataset_id, s.seq]));

    const hits: Hit[] = [];
    states.forEach((state, ds) => {
      const d = state.dataset_id;
      const ceiling = hwm[d] ?? 0;
      const textHits = scoringText ? this.index(t, d).search(scoringText, maxExpansions) : [];
      if (text) {
        for (const h of textHits) {
          if (h.seq > ceiling) continue;
          const rec = needRecord ? this.store.records.get([t, d, h.seq]) : undefined;
          if (needRecord && (!rec || !accept(rec))) continue;
          hits.push({ ds, seq: h.seq, score: h.score, terms: h.terms, rec });
        }
        return;
      }
      const scores = new Map(textHits.map((h) => [h.seq, h]));
      const range = { start: [t, d, ceiling], end: [t, d, 0], reverse: true };
      if (!needRecord) {
        for (const key of this.store.records.getKeys(range)) hits.push({ ds, seq: key[2] as number, score: 0 });
        return;
      }
      for (const { value: rec } of this.store.records.getRange(range)) {
        if (!accept(rec)) continue;
        const scored = scores.get(rec.seq);
        hits.push({ ds, seq: rec.seq, score: scored?.score ?? 0, terms: scored?.terms, rec });
      }
    });

    if (scoringText) hits.sort((a, b) => b.score - a.score || a.ds - b.ds || b.seq - a.seq);
    else hits.sort((a, b) => a.ds - b.ds || b.seq - a.seq);
    if (aggregator) for (const h of hits) aggregator.add(h.rec!);
    const ranked = collapse ? collapseHits(hits, collapse) : hits;

    const handle = continued?.handle ?? this.handles.create(t, request, hwm);
    const queryTerms = new Set(analyze(scoringText));
    const records = ranked.slice(offset, offset + limit).flatMap((h) => {
      const d = states[h.ds].dataset_id;
      const rec = h.rec ?? this.store.records.get([t, d, h.seq]);
      return rec ? [toResult(t, d, rec, h, scoringText ? 'bm25' : 'none', new Set([...queryTerms, ...(h.terms ?? [])]))] : [];
    });
    return {
      search_id: handle.search_id,
      took_ms: Math.round((performance.now() - started) * 100) / 100,
      mode,
      total: { relation: 'eq', value: ranked.length },
      records,
      aggregations: aggregator?.result() ?? {},
      next_cursor: offset + limit < ranked.length ? encodeCursor(handle.search_id, offset + limit) : null,
    };
  }

  private index(tenantId: string, datasetId: string) {
    const source = this.sources.ofDataset(tenantId, datasetId)[0];
    return this.text.get(tenantId, datasetId, source.search_config);
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

export function toResult(tenantId: string, datasetId: string, rec: StoredRecord, hit: { score: number }, scoreKind: string, terms: Set<string>): ResultRecord {
  return {
    id: rec.id,
    title: rec.title,
    body: rec.body,
    metadata: rec.metadata,
    score: hit.score,
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

