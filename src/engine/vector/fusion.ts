/** A ranked hit as the search keeps it: which dataset of the search, which record, what score. */
export interface Scored { ds: number; seq: number; score: number }

export interface FusionOptions {
  /** vector weight when the two lists' tops agree completely; it shrinks with their agreement */
  maxWeight: number;
  /** how many hits of each list's top the agreement compares */
  agreementDepth: number;
  /** hits of a list whose scores give its mean and spread */
  depth: number;
}

/**
 * Hybrid fusion, adaptive per query (bench/semantic.ts has the figures). The text list's order is
 * the anchor: each text hit's score is `(1 - w) · z_text + w · z_vector`, with
 * `w = maxWeight · agreement`, the agreement being the share of the vector top `agreementDepth`
 * also in the text top `agreementDepth`. A vector list that disagrees with text (a weak embedder,
 * a collection it was not made for) gets no say, and the text order stands; one that agrees can
 * reorder near-ties. Vector hits that no text hit matched come after every text hit, in vector
 * order: they add recall where text found little, never push a text hit down. Chosen on SciFact
 * train over fixed-weight z-score fusion (which reorders as many queries for the worse as for the
 * better) and reciprocal-rank fusion (worse than text alone with a weak vector list).
 */
export const FUSION = { name: 'adaptive_zscore_fusion', maxWeight: 0.15, agreementDepth: 5, depth: 100 };

const key = (h: Scored) => `${h.ds}:${h.seq}`;

/** Each hit's z-score over the list's top `depth` (mean and spread of those), and the lowest of them. */
export function zScores(list: Scored[], depth: number): { by: Map<string, number>; floor: number } {
  const top = list.slice(0, depth);
  const n = top.length || 1;
  const mean = top.reduce((s, h) => s + h.score, 0) / n;
  const sd = Math.sqrt(top.reduce((s, h) => s + (h.score - mean) ** 2, 0) / n) || 1;
  const by = new Map(list.map((h) => [key(h), (h.score - mean) / sd]));
  let floor = top.length ? Infinity : 0;
  for (const h of top) floor = Math.min(floor, (h.score - mean) / sd);
  return { by, floor };
}

/** Share of the vector list's top k that is also in the text list's top k (0 when either is empty). */
export function agreement(text: Scored[], vector: Scored[], k: number): number {
  const tops = new Set(text.slice(0, k).map(key));
  const shared = vector.slice(0, k).filter((h) => tops.has(key(h))).length;
  return shared / k;
}

/** The adaptive fusion above; both lists best first. */
export function fuseAdaptive<T extends Scored>(text: T[], vector: T[], o: FusionOptions = FUSION): T[] {
  return fuseAnchored(text, vector, o.maxWeight * agreement(text, vector, o.agreementDepth), o.depth);
}

/**
 * Text hits scored `(1 - w) · z_text + w · z_vector` (a text hit missing from the vector list takes
 * its lowest z), then the vector hits that are no text hit, below them all, in vector order.
 */
export function fuseAnchored<T extends Scored>(text: T[], vector: T[], w: number, depth = FUSION.depth): T[] {
  const zt = zScores(text, depth);
  const zv = zScores(vector, depth);
  // with w = 0 this is the text z-score, monotone in the text score: the text order
  const fused = text.map((h) => ({ ...h, score: (1 - w) * zt.by.get(key(h))! + w * (zv.by.get(key(h)) ?? zv.floor) }));
  const inText = new Set(text.map(key));
  const lowest = fused.reduce((m, h) => Math.min(m, h.score), 0);
  const top = vector.length ? zv.by.get(key(vector[0]))! : 0;
  const added = vector.filter((h) => !inText.has(key(h))).map((h) => ({ ...h, score: lowest - 1 - (top - zv.by.get(key(h))!) }));
  return [...fused, ...added];
}

/** Fixed-weight z-score fusion (the previous hybrid), kept for comparison in the benchmark. */
export function fuseZ<T extends Scored>(text: T[], vector: T[], weight = 0.2, depth = FUSION.depth): T[] {
  const zt = zScores(text, depth);
  const zv = zScores(vector, depth);
  const all = new Map<string, T>();
  for (const h of [...text, ...vector]) if (!all.has(key(h))) all.set(key(h), h);
  return [...all].map(([k, h]) => ({ ...h, score: (1 - weight) * (zt.by.get(k) ?? zt.floor) + weight * (zv.by.get(k) ?? zv.floor) }));
}

/** Reciprocal-rank fusion, kept for comparison in the benchmark. */
export function fuseRRF<T extends Scored>(text: T[], vector: T[], weight = 1, k = 60): T[] {
  const all = new Map<string, T>();
  const add = (list: T[], w: number) =>
    list.forEach((h, rank) => {
      const prev = all.get(key(h));
      all.set(key(h), { ...(prev ?? h), score: (prev ? prev.score : 0) + w / (k + rank + 1) });
    });
  add(text, 1);
  add(vector, weight);
  return [...all.values()];
}
