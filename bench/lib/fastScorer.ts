import type MiniSearch from 'minisearch';
import type { SearchConfig } from '../../src/api/sources.js';
import type { StoredRecord } from '../../src/engine/records.js';
import { DEFAULT_MAX_EXPANSION_TERMS } from '../../src/engine/search/search.js';
import { TextIndex } from '../../src/engine/text/textIndex.js';

/** Weight of an expansion term, as TextIndex gives it (not exported there; the fidelity check catches a drift). */
const EXPANSION_WEIGHT = 0.5;

export interface Params { k: number; b: number; d: number; boost: Record<string, number> }
export interface Variant { expansions: boolean; coordination: boolean }

interface Internals {
  mini: MiniSearch<StoredRecord>;
  queryTerms(text: string, maxExpansions: number): { exact: string[]; expanded: string[] };
}
interface MiniInternals {
  _index: { get(term: string): Map<number, Map<number, number>> | undefined };
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
}

interface Posting { field: string; df: number; avg: number; docs: Int32Array; tf: Float64Array; len: Float64Array }
interface Clause { weight: number; expansion: boolean; postings: Posting[] }
export type Prepared = Clause[][]; // grouped by the term string MiniSearch counts once in its coordination factor

/**
 * The engine's BM25 over one TextIndex, recomputed from the index's postings so that a grid of
 * parameters costs milliseconds per setting instead of seconds: MiniSearch rebuilds result maps
 * and objects on every search. It reproduces MiniSearch's formula, its per-field idf and length
 * (unique tokens), and its habit of multiplying a score by the number of query terms matched.
 */
export class FastScorer {
  private readonly m: MiniInternals;
  private readonly scores: Float64Array;
  private readonly quality: Int32Array;
  private readonly stamp: Int32Array;
  private stampNow = 0;

  constructor(readonly index: TextIndex) {
    this.m = (index as unknown as Internals).mini as unknown as MiniInternals;
    const n = this.m._documentCount + 1;
    this.scores = new Float64Array(n);
    this.quality = new Int32Array(n);
    this.stamp = new Int32Array(n);
  }

  /** An index holding `records` in order; its store is never read because records arrive from seq 1. */
  static build(records: StoredRecord[], config: SearchConfig): FastScorer {
    const index = new TextIndex(null as never, 'bench', 'bench', '/nonexistent/text.json', config);
    index.add(records);
    return new FastScorer(index);
  }

  prepare(text: string): Prepared {
    const { exact, expanded } = (this.index as unknown as Internals).queryTerms(text, DEFAULT_MAX_EXPANSION_TERMS);
    const groups = new Map<string, Clause[]>();
    const add = (term: string, expansion: boolean) => {
      const data = this.m._index.get(term);
      if (!data) return;
      const postings: Posting[] = [];
      for (const [field, fieldId] of Object.entries(this.m._fieldIds)) {
        const freqs = data.get(fieldId);
        if (!freqs) continue;
        const docs = Int32Array.from(freqs.keys());
        postings.push({
          field, df: freqs.size, avg: this.m._avgFieldLength[fieldId], docs,
          tf: Float64Array.from(freqs.values()),
          len: Float64Array.from(docs, (doc) => this.m._fieldLength.get(doc)![fieldId]),
        });
      }
      if (!groups.has(term)) groups.set(term, []);
      groups.get(term)!.push({ weight: expansion ? EXPANSION_WEIGHT : 1, expansion, postings });
    };
    for (const term of exact) add(term, false);
    for (const term of expanded) add(term, true);
    return [...groups.values()];
  }

  /** Seqs of the best `limit` records, ties broken by the newer record as the engine does. */
  rank(query: Prepared, p: Params, limit: number, v: Variant = { expansions: true, coordination: true }): number[] {
    const { scores, quality, stamp } = this;
    const n = this.m._documentCount;
    const touched: number[] = [];
    for (const group of query) {
      const groupStamp = ++this.stampNow;
      for (const clause of group) {
        if (clause.expansion && !v.expansions) continue;
        for (const post of clause.postings) {
          const boost = (p.boost[post.field] || 1) * clause.weight;
          const idf = Math.log(1 + (n - post.df + 0.5) / (post.df + 0.5));
          const { docs, tf, len } = post;
          for (let i = 0; i < docs.length; i++) {
            const doc = docs[i];
            if (stamp[doc] !== groupStamp) {
              if (quality[doc] === 0) touched.push(doc);
              stamp[doc] = groupStamp;
              quality[doc]++;
            }
            const f = tf[i];
            scores[doc] += boost * idf * (p.d + (f * (p.k + 1)) / (f + p.k * (1 - p.b + (p.b * len[i]) / post.avg)));
          }
        }
      }
    }
    const hits = touched.map((doc) => ({ seq: doc + 1, score: v.coordination ? scores[doc] * quality[doc] : scores[doc] }));
    for (const doc of touched) {
      scores[doc] = 0;
      quality[doc] = 0;
    }
    return topK(hits, limit);
  }
}

function topK(hits: { seq: number; score: number }[], k: number): number[] {
  const better = (a: { seq: number; score: number }, b: { seq: number; score: number }) => a.score > b.score || (a.score === b.score && a.seq > b.seq);
  if (hits.length > 4 * k) {
    // Partial selection: most hits never reach the top k, and sorting thousands per query per setting is the slow part.
    const top: { seq: number; score: number }[] = [];
    for (const h of hits) {
      if (top.length === k && !better(h, top[k - 1])) continue;
      let i = top.length === k ? k - 1 : top.length;
      while (i > 0 && better(h, top[i - 1])) i--;
      top.splice(i, 0, h);
      if (top.length > k) top.pop();
    }
    return top.map((h) => h.seq);
  }
  return hits.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0)).slice(0, k).map((h) => h.seq);
}
