import { TopK } from '../search/topK.js';

/** A term to score, with its weight (1 for the query's own terms, less for expansions). */
export interface Clause { term: string; weight: number }
export interface Bm25Params { k: number; b: number; d: number }
/** Matches in ascending seq order (every match), or the best `top` by score (then seq), best first. */
export interface Scored { seqs: Float64Array; scores: Float64Array; total: number }

/**
 * One part of a text index as scoring sees it: the in-memory segment or a sealed one. Documents
 * are positions below `slots`, ascending with their seq; fields are positions in the configured
 * text fields.
 */
export interface SegmentView {
  /** documents not removed */
  readonly docs: number;
  /** per field, the summed length of the documents not removed */
  readonly totalLength: number[];
  readonly slots: number;
  /** no document was removed: every posting counts */
  readonly clean: boolean;
  /** (doc, tf) pairs: a file's, or the in-memory segment's growing array */
  postings(term: string, field: number): Uint32Array | number[] | undefined;
  isLive(doc: number): boolean;
  length(doc: number, field: number): number;
  seq(doc: number): number;
}

/** Thrown past the deadline; the worker answers it as a timeout. */
export class ScoringTimeout extends Error {}

/**
 * BM25+ (MiniSearch's formula, per-field idf and lengths, and field boosts, where a boost of 0
 * counts as 1 as in MiniSearch), summed over the clauses, one segment at a time into an array of
 * scores. The statistics — document count, average field length, document frequency — are summed
 * over every segment first, so a dataset ranks the same in one segment as in ten.
 */
export function scoreSegments(segments: SegmentView[], clauses: Clause[], boost: number[], p: Bm25Params, deadline: number, top?: number): Scored {
  if (Date.now() > deadline) throw new ScoringTimeout(); // it waited behind other work until too late
  const n = segments.reduce((sum, s) => sum + s.docs, 0);
  const weights: { clause: Clause; field: number; w: number }[] = [];
  for (const clause of clauses) {
    for (let field = 0; field < boost.length; field++) {
      let df = 0;
      for (const s of segments) df += liveCount(s, s.postings(clause.term, field));
      if (df === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      weights.push({ clause, field, w: clause.weight * (boost[field] || 1) * idf });
    }
  }
  const average = boost.map((_, f) => segments.reduce((sum, s) => sum + s.totalLength[f], 0) / n);
  const kConst = p.k * (1 - p.b);
  const found: Scored[] = [];
  let work = 0;
  for (const s of segments) {
    const scores = scoreArray(s.slots);
    const clean = s.clean;
    for (const { clause, field, w } of weights) {
      const list = s.postings(clause.term, field);
      if (!list) continue;
      const lengthNorm = (p.k * p.b) / average[field];
      const k1 = p.k + 1;
      // two copies of one loop (a file's pairs, the in-memory segment's array): each stays monomorphic on the hot path
      if (list instanceof Uint32Array) {
        for (let i = 0; i < list.length; i += 2) {
          const doc = list[i];
          if (!clean && !s.isLive(doc)) continue;
          const tf = list[i + 1];
          scores[doc] += w * (p.d + (tf * k1) / (tf + kConst + lengthNorm * s.length(doc, field)));
        }
      } else {
        for (let i = 0; i < list.length; i += 2) {
          const doc = list[i];
          if (!clean && !s.isLive(doc)) continue;
          const tf = list[i + 1];
          scores[doc] += w * (p.d + (tf * k1) / (tf + kConst + lengthNorm * s.length(doc, field)));
        }
      }
      work += list.length / 2;
      if (work > 1 << 16) {
        work = 0;
        if (Date.now() > deadline) throw new ScoringTimeout();
      }
    }
    found.push(top === undefined ? everyMatch(s, scores) : best(s, scores, top));
  }
  return found.length === 1 ? found[0] : top === undefined ? concat(found) : bestOf(found, top);
}

/** Up to this many slots, one segment's scores go in an array kept between searches. */
const KEPT_SLOTS = 4 * 2 ** 20;
let kept = new Float64Array(0);

/**
 * Zeroed scores for one segment. Searches of a large dataset would otherwise leave 8 bytes per
 * record of garbage each (80 MB at 10 million records), faster than the collector takes it back.
 */
function scoreArray(slots: number): Float64Array {
  if (slots > KEPT_SLOTS) return new Float64Array(slots);
  if (kept.length < slots) kept = new Float64Array(Math.min(KEPT_SLOTS, Math.max(slots, kept.length * 2)));
  const scores = kept.subarray(0, slots);
  scores.fill(0);
  return scores;
}

function liveCount(s: SegmentView, list: Uint32Array | number[] | undefined): number {
  if (!list) return 0;
  if (s.clean) return list.length / 2;
  let count = 0;
  for (let i = 0; i < list.length; i += 2) if (s.isLive(list[i])) count++;
  return count;
}

/** Positions grow with seq (records enter in order), so a walk over them yields seqs ascending. */
function everyMatch(s: SegmentView, scores: Float64Array): Scored {
  let total = 0;
  for (let doc = 0; doc < scores.length; doc++) if (scores[doc] > 0) total++;
  const seqs = new Float64Array(total);
  const out = new Float64Array(total);
  let i = 0;
  for (let doc = 0; doc < scores.length; doc++) {
    if (scores[doc] > 0) {
      seqs[i] = s.seq(doc);
      out[i++] = scores[doc];
    }
  }
  return { seqs, scores: out, total };
}

/** Below this many matches they are sorted outright; above it a heap keeps the best `k` as they come. */
const SORT_ALL = 20_000;

function best(s: SegmentView, scores: Float64Array, k: number): Scored {
  let total = 0;
  for (let doc = 0; doc < scores.length; doc++) if (scores[doc] > 0) total++;
  let docs: Uint32Array;
  if (total <= SORT_ALL) {
    docs = new Uint32Array(total);
    let i = 0;
    for (let doc = 0; doc < scores.length; doc++) if (scores[doc] > 0) docs[i++] = doc;
  } else {
    const heap = new TopK<number>(k, (a, b) => scores[a] > scores[b] || (scores[a] === scores[b] && a > b));
    for (let doc = 0; doc < scores.length; doc++) if (scores[doc] > 0) heap.push(doc);
    docs = Uint32Array.from(heap.unsorted());
  }
  // by score, then the newer record (a larger position)
  docs.sort((a, b) => scores[b] - scores[a] || b - a);
  if (docs.length > k) docs = docs.subarray(0, k);
  return { seqs: Float64Array.from(docs, (doc) => s.seq(doc)), scores: Float64Array.from(docs, (doc) => scores[doc]), total };
}

/** Every segment's matches, in segment order: seqs stay ascending. */
function concat(parts: Scored[]): Scored {
  const total = parts.reduce((sum, r) => sum + r.total, 0);
  const seqs = new Float64Array(total);
  const scores = new Float64Array(total);
  let at = 0;
  for (const r of parts) {
    seqs.set(r.seqs, at);
    scores.set(r.scores, at);
    at += r.seqs.length;
  }
  return { seqs, scores, total };
}

/** The best `k` of every segment's best `k`. */
function bestOf(parts: Scored[], k: number): Scored {
  const heap = new TopK<{ seq: number; score: number }>(k, (a, b) => a.score > b.score || (a.score === b.score && a.seq > b.seq));
  for (const r of parts) for (let i = 0; i < r.seqs.length; i++) heap.push({ seq: r.seqs[i], score: r.scores[i] });
  const hits = heap.sorted();
  return { seqs: Float64Array.from(hits, (h) => h.seq), scores: Float64Array.from(hits, (h) => h.score), total: parts.reduce((sum, r) => sum + r.total, 0) };
}
