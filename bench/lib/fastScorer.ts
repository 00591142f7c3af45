import type { SearchConfig } from '../../src/api/sources.js';
import type { StoredRecord } from '../../src/engine/records.js';
import { DEFAULT_MAX_EXPANSION_TERMS } from '../../src/engine/search/search.js';
import type { LiveSegment } from '../../src/engine/text/liveSegment.js';
import { TextIndex } from '../../src/engine/text/textIndex.js';

/** Weight of an expansion term, as TextIndex gives it (not exported there; the fidelity check catches a drift). */
const EXPANSION_WEIGHT = 0.5;

export interface Params { k: number; b: number; d: number; boost: Record<string, number> }
export interface Variant { expansions: boolean; coordination: boolean }

/** The TextIndex members it reads: every record is in its in-memory segment (no segment size given). */
interface Internals {
  live: LiveSegment;
  fields: string[];
  queryTerms(text: string, maxExpansions: number): { exact: string[]; expanded: string[] };
}

/** `norm` is the field length over the average field length, fixed for an index. */
interface Posting { field: string; df: number; docs: Int32Array; tf: Float64Array; norm: Float64Array }
interface Clause { weight: number; expansion: boolean; postings: Posting[] }
export type Prepared = Clause[][]; // grouped by the term string MiniSearch counts once in its coordination factor

/**
 * The engine's BM25 over one TextIndex, recomputed from the index's postings so that a grid of
 * parameters costs milliseconds per setting instead of seconds: MiniSearch rebuilds result maps
 * and objects on every search. It reproduces MiniSearch's formula, its per-field idf and length
 * (unique tokens), and its habit of multiplying a score by the number of query terms matched.
 */
export class FastScorer {
  private readonly m: Internals;
  private readonly scores: Float64Array;
  private readonly quality: Int32Array;
  private readonly stamp: Int32Array;
  private stampNow = 0;

  constructor(readonly index: TextIndex) {
    this.m = index as unknown as Internals;
    const n = this.m.live.slots + 1;
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
    const { exact, expanded } = this.m.queryTerms(text, DEFAULT_MAX_EXPANSION_TERMS);
    const live = this.m.live;
    const groups = new Map<string, Clause[]>();
    const add = (term: string, expansion: boolean) => {
      if (!live.terms.has(term)) return;
      const postings: Posting[] = [];
      this.m.fields.forEach((field, f) => {
        const pairs = live.postings(term, f);
        if (!pairs) return;
        const docs = Int32Array.from({ length: pairs.length / 2 }, (_, i) => pairs[2 * i]);
        const avg = live.totalLength[f] / live.docs;
        postings.push({
          field, df: docs.length, docs,
          tf: Float64Array.from(docs, (_, i) => pairs[2 * i + 1]),
          norm: Float64Array.from(docs, (doc) => live.length(doc, f) / avg),
        });
      });
      if (!groups.has(term)) groups.set(term, []);
      groups.get(term)!.push({ weight: expansion ? EXPANSION_WEIGHT : 1, expansion, postings });
    };
    for (const term of exact) add(term, false);
    for (const term of expanded) add(term, true);
    return [...groups.values()];
  }

  /** Seqs of the best `limit` records, ties broken by the newer record as the engine does. */
  rank(query: Prepared, p: Params, limit: number, v: Variant = { expansions: true, coordination: false }): number[] {
    const { scores, quality, stamp } = this;
    const n = this.m.live.docs;
    const touched: number[] = [];
    const k1 = p.k + 1;
    const kConst = p.k * (1 - p.b);
    const kNorm = p.k * p.b;
    for (const group of query) {
      const groupStamp = ++this.stampNow;
      for (const clause of group) {
        if (clause.expansion && !v.expansions) continue;
        for (const post of clause.postings) {
          const boost = (p.boost[post.field] || 1) * clause.weight;
          const idf = Math.log(1 + (n - post.df + 0.5) / (post.df + 0.5));
          const { docs, tf, norm } = post;
          for (let i = 0; i < docs.length; i++) {
            const doc = docs[i];
            if (stamp[doc] !== groupStamp) {
              if (quality[doc] === 0) touched.push(doc);
              stamp[doc] = groupStamp;
              quality[doc]++;
            }
            const f = tf[i];
            scores[doc] += boost * idf * (p.d + (f * k1) / (f + kConst + kNorm * norm[i]));
          }
        }
      }
    }
    // Partial selection into small typed arrays: sorting thousands of hits per query per setting is the slow part.
    const topSeq = new Int32Array(limit);
    const topScore = new Float64Array(limit);
    let count = 0;
    for (const doc of touched) {
      const score = v.coordination ? scores[doc] * quality[doc] : scores[doc];
      const seq = doc + 1;
      scores[doc] = 0;
      quality[doc] = 0;
      if (count === limit && !(score > topScore[limit - 1] || (score === topScore[limit - 1] && seq > topSeq[limit - 1]))) continue;
      let i = count < limit ? count++ : limit - 1;
      while (i > 0 && (score > topScore[i - 1] || (score === topScore[i - 1] && seq > topSeq[i - 1]))) {
        topScore[i] = topScore[i - 1];
        topSeq[i] = topSeq[i - 1];
        i--;
      }
      topScore[i] = score;
      topSeq[i] = seq;
    }
    return Array.from(topSeq.subarray(0, count));
  }
}

