/**
 * Deliberately bad vector lists, to check that a fusion cannot make hybrid worse than text: a
 * fusion that survives both should survive a weak embedder on a collection it was not tuned on.
 */
export interface Ranked { ds: number; seq: number; score: number; id: string }

/** A seeded generator (LCG), so every run stresses with the same lists. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

function shuffle<T>(items: T[], seed: number): T[] {
  const out = [...items];
  const next = random(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Vectors of shuffled documents: the same scores, each id swapped for another document's by one fixed permutation. */
export function shuffledDocuments(ids: string[], seed = 42): (vector: Ranked[]) => Ranked[] {
  const sorted = [...new Set(ids)].sort();
  const to = new Map(sorted.map((id, i) => [id, shuffle(sorted, seed)[i]]));
  return (vector) => vector.map((h) => ({ ...h, id: to.get(h.id)!, seq: Number(to.get(h.id)) }));
}

/**
 * A list that finds text's neighbourhood but ranks it at random: text's top 100 in a seeded random
 * order, with the vector list's scores. Harder than shuffled documents: every hit is a text hit.
 */
export function textInRandomOrder(text: Ranked[], vector: Ranked[], seed: number): Ranked[] {
  const pool = shuffle(text.slice(0, Math.min(100, vector.length)), seed);
  return pool.map((h, i) => ({ ...h, score: vector[i].score }));
}
