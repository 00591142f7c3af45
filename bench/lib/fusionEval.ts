/** A fusion measured on per-query text and vector lists already fetched: no search runs here. */
import type { Fuse } from './fusionVariants.js';
import { evaluate, ndcgAt, type Qrels } from './metrics.js';
import { shuffledDocuments, textInRandomOrder, type Ranked } from './stress.js';

/** The text and vector lists of each query of one split, and its judgments. */
export interface Lists { text: Map<string, Ranked[]>; vector: Map<string, Ranked[]>; qrels: Qrels }

export type Stress = 'none' | 'shuffled documents' | 'text in random order';

const seedOf = (qid: string) => [...qid].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7);

/** Each query's ranking (ids, best first) by a fusion, with the vector lists made bad on request. */
export function fusedRankings(lists: Lists, fuse: Fuse, stress: Stress = 'none'): Map<string, string[]> {
  const allIds = [...lists.text.values(), ...lists.vector.values()].flatMap((l) => l.map((h) => h.id));
  const shuffled = stress === 'shuffled documents' ? shuffledDocuments(allIds) : null;
  const out = new Map<string, string[]>();
  for (const [qid, text] of lists.text) {
    let vector = lists.vector.get(qid) ?? [];
    if (shuffled) vector = shuffled(vector);
    if (stress === 'text in random order') vector = textInRandomOrder(text, vector, seedOf(qid));
    // a stable sort: ties keep the fusion's order, as the engine's do
    out.set(qid, fuse(text, vector).sort((a, b) => b.score - a.score).slice(0, 100).map((h) => h.id));
  }
  return out;
}

/** Queries whose nDCG@10 a ranking raises and lowers against a baseline ranking. */
export function winsLosses(rankings: Map<string, string[]>, baseline: Map<string, string[]>, qrels: Qrels): { wins: number; losses: number } {
  let wins = 0;
  let losses = 0;
  for (const [qid, relevant] of qrels) {
    const d = ndcgAt(rankings.get(qid) ?? [], relevant) - ndcgAt(baseline.get(qid) ?? [], relevant);
    if (d > 1e-9) wins++;
    if (d < -1e-9) losses++;
  }
  return { wins, losses };
}

export { evaluate };
