/** The fusions the semantic benchmark compares, each a function of the text list and the vector list (best first). */
import { agreement, FUSION, fuseAdaptive, fuseAnchored, fuseRRF, fuseZ, zScores } from '../../src/engine/vector/fusion.js';
import type { Ranked } from './stress.js';

export type Fuse = (text: Ranked[], vector: Ranked[]) => Ranked[];

/** Text z-score gap between the first and second hit: a large one means text is sure of its first. */
function textGap(text: Ranked[]): number {
  if (text.length < 2) return Infinity;
  const z = zScores(text, FUSION.depth).by;
  return z.get(`${text[0].ds}:${text[0].seq}`)! - z.get(`${text[1].ds}:${text[1].seq}`)!;
}

/** Truncated rank-biased overlap (Webber et al. 2010) of the two tops, scaled to 0..1: agreement that weighs the first ranks most. */
export function rbo(text: Ranked[], vector: Ranked[], p = 0.9, depth = 20): number {
  const a = new Set<string>();
  const b = new Set<string>();
  let shared = 0;
  let sum = 0;
  let norm = 0;
  for (let d = 1; d <= depth; d++) {
    const x = text[d - 1]?.id;
    const y = vector[d - 1]?.id;
    if (x !== undefined) (a.add(x), b.has(x) && shared++);
    if (y !== undefined) (b.add(y), a.has(y) && shared++);
    sum += (p ** (d - 1) * shared) / d;
    norm += p ** (d - 1);
  }
  return sum / norm;
}

export const adaptive = (maxWeight: number, agreementDepth: number): Fuse => (t, v) => fuseAdaptive(t, v, { ...FUSION, maxWeight, agreementDepth });

/** Every fusion measured, by name; `shipped` marks the one hybrid search uses. */
export const VARIANTS: { name: string; fuse: Fuse; shipped?: boolean }[] = [
  { name: 'previous: z-score, fixed weight 0.2', fuse: (t, v) => fuseZ(t, v, 0.2) },
  { name: 'reciprocal rank k60', fuse: (t, v) => fuseRRF(t, v, 1, 60) },
  { name: 'text-anchored z-score, fixed 0.1', fuse: (t, v) => fuseAnchored(t, v, 0.1) },
  { name: 'text-anchored, 0.3 · overlap@10', fuse: adaptive(0.3, 10) },
  { name: 'text-anchored, 0.2 · RBO(p 0.9, 20)', fuse: (t, v) => fuseAnchored(t, v, 0.2 * rbo(t, v)) },
  { name: 'text-anchored, 0.3 · overlap@10, text if gap > 1', fuse: (t, v) => fuseAnchored(t, v, textGap(t) > 1 ? 0 : 0.3 * agreement(t, v, 10)) },
  { name: `adaptive: ${FUSION.maxWeight} · overlap@${FUSION.agreementDepth} (shipped)`, fuse: (t, v) => fuseAdaptive(t, v), shipped: true },
];
