/** A ranked hit as the search keeps it: which dataset of the search, which record, what score. */
export interface Scored { ds: number; seq: number; score: number }

/**
 * Hybrid fusion: each list's scores become z-scores (mean and spread over its top `depth`), a
 * record missing from a list takes that list's lowest z, and the fused score is
 * `(1 - weight) · z_text + weight · z_vector`. Chosen over reciprocal-rank fusion on SciFact's
 * train queries (bench/semantic.ts): with a weak vector list, RRF pulls good text hits down.
 */
export const FUSION = { name: 'zscore_fusion', weight: 0.2, depth: 100 };

export function fuseZ<T extends Scored>(text: T[], vector: T[], weight = FUSION.weight, depth = FUSION.depth): T[] {
  const z = (list: T[]) => {
    const top = list.slice(0, depth);
    const mean = top.reduce((s, h) => s + h.score, 0) / (top.length || 1);
    const sd = Math.sqrt(top.reduce((s, h) => s + (h.score - mean) ** 2, 0) / (top.length || 1)) || 1;
    const by = new Map(list.map((h) => [`${h.ds}:${h.seq}`, (h.score - mean) / sd]));
    const floor = list.length ? Math.min(...list.slice(0, depth).map((h) => (h.score - mean) / sd)) : 0;
    return { by, floor };
  };
  const zt = z(text);
  const zv = z(vector);
  const all = new Map<string, T>();
  for (const h of [...text, ...vector]) if (!all.has(`${h.ds}:${h.seq}`)) all.set(`${h.ds}:${h.seq}`, h);
  return [...all].map(([key, h]) => ({ ...h, score: (1 - weight) * (zt.by.get(key) ?? zt.floor) + weight * (zv.by.get(key) ?? zv.floor) }));
}

/** Reciprocal-rank fusion, kept for comparison in the benchmark. */
export function fuseRRF<T extends Scored>(text: T[], vector: T[], weight = 1, k = 60): T[] {
  const all = new Map<string, T>();
  const add = (list: T[], w: number) =>
    list.forEach((h, rank) => {
      const key = `${h.ds}:${h.seq}`;
      const prev = all.get(key);
      all.set(key, { ...(prev ?? h), score: (prev ? prev.score : 0) + w / (k + rank + 1) });
    });
  add(text, 1);
  add(vector, weight);
  return [...all.values()];
}
