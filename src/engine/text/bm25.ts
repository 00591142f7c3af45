import type MiniSearch from 'minisearch';
import { TopK } from '../search/topK.js';

/** A term to score, with its weight (1 for the query's own terms, less for expansions). */
export interface Clause { term: string; weight: number }
export interface Bm25Params { k: number; b: number; d: number }
/** Matches in ascending seq order (every match), or the best `top` by score (then seq), best first. */
export interface Scored { seqs: Float64Array; scores: Float64Array; total: number }

interface Internals {
  _index: { get(term: string): Map<number, Map<number, number>> | undefined };
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _documentIds: Map<number, unknown>;
  _nextId: number;
  _dirtCount: number;
}

/** Thrown past the deadline; the worker answers it as a timeout. */
export class ScoringTimeout extends Error {}

/**
 * MiniSearch's BM25+ (its formula, per-field idf and lengths, and field boosts, where a boost of
 * 0 counts as 1 as in MiniSearch), summed over the clauses, computed straight from its postings
 * into one array of scores. MiniSearch's own search builds a result object per matching
 * document: for a term in every record of a large dataset that is gigabytes and seconds.
 */
export function scoreClauses(mini: MiniSearch<any>, clauses: Clause[], boost: Record<string, number>, p: Bm25Params, deadline: number, top?: number): Scored {
  if (Date.now() > deadline) throw new ScoringTimeout(); // it waited behind other work until too late
  const m = mini as unknown as Internals;
  const scores = new Float64Array(m._nextId);
  const live = m._documentIds;
  let work = 0;
  for (const { term, weight } of clauses) {
    const data = m._index.get(term);
    if (!data) continue;
    for (const [field, fieldBoost] of Object.entries(boost)) {
      const fieldId = m._fieldIds[field];
      const freqs = data.get(fieldId);
      if (!freqs) continue;
      let df = freqs.size;
      if (m._dirtCount > 0) for (const doc of freqs.keys()) if (!live.has(doc)) df--;
      const idf = Math.log(1 + (m._documentCount - df + 0.5) / (df + 0.5));
      const w = weight * (fieldBoost || 1) * idf;
      const lengthNorm = (p.k * p.b) / m._avgFieldLength[fieldId];
      const kConst = p.k * (1 - p.b);
      for (const [doc, tf] of freqs) {
        if ((++work & 0xffff) === 0 && Date.now() > deadline) throw new ScoringTimeout();
        if (!live.has(doc)) continue;
        const len = m._fieldLength.get(doc)![fieldId];
        scores[doc] += w * (p.d + (tf * (p.k + 1)) / (tf + kConst + lengthNorm * len));
      }
    }
  }
  return top === undefined ? everyMatch(m, scores) : best(m, scores, top);
}

/** Short ids grow with seq (records enter in order), so a walk over them yields seqs ascending. */
function everyMatch(m: Internals, scores: Float64Array): Scored {
  let total = 0;
  for (let doc = 0; doc < scores.length; doc++) if (scores[doc] > 0) total++;
  const seqs = new Float64Array(total);
  const out = new Float64Array(total);
  let i = 0;
  for (let doc = 0; doc < scores.length; doc++) {
    if (scores[doc] > 0) {
      seqs[i] = m._documentIds.get(doc) as number;
      out[i++] = scores[doc];
    }
  }
  return { seqs, scores: out, total };
}

function best(m: Internals, scores: Float64Array, k: number): Scored {
  const heap = new TopK<number>(k, (a, b) => scores[a] > scores[b] || (scores[a] === scores[b] && a > b));
  let total = 0;
  for (let doc = 0; doc < scores.length; doc++) {
    if (scores[doc] > 0) {
      total++;
      heap.push(doc);
    }
  }
  const docs = heap.sorted();
  return { seqs: Float64Array.from(docs, (doc) => m._documentIds.get(doc) as number), scores: Float64Array.from(docs, (doc) => scores[doc]), total };
}
