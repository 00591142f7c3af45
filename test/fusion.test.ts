/** Hybrid fusion: the text order stands unless the vector list agrees with it. */
import { describe, expect, it } from 'vitest';
import { agreement, FUSION, fuseAdaptive, type Scored } from '../src/engine/vector/fusion.js';

/** Hits with these seqs, best first, scores falling from `top` by `step`. */
const list = (seqs: number[], top = 10, step = 1): Scored[] => seqs.map((seq, i) => ({ ds: 0, seq, score: top - i * step }));
const order = (hits: Scored[]) => [...hits].sort((a, b) => b.score - a.score).map((h) => h.seq);

describe('adaptive fusion', () => {
  const text = list([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

  it('keeps the text order when the vector list shares nothing with the text top, and puts vector-only hits after every text hit', () => {
    const vector = list([21, 22, 23, 24, 25, 9, 10], 0.9, 0.01);
    expect(agreement(text, vector, FUSION.agreementDepth)).toBe(0);
    expect(order(fuseAdaptive(text, vector))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 21, 22, 23, 24, 25]);
  });

  it('keeps the text order with no vector hits, and gives the vector order when text found nothing', () => {
    expect(order(fuseAdaptive(text, []))).toEqual(text.map((h) => h.seq));
    expect(order(fuseAdaptive([], list([7, 3, 5], 0.9, 0.1)))).toEqual([7, 3, 5]);
  });

  it('lets an agreeing vector list break a near-tie of text scores, not overturn a clear text lead', () => {
    // 2 and 3 nearly tie in text; 1 leads by far
    const close: Scored[] = [{ ds: 0, seq: 1, score: 20 }, { ds: 0, seq: 2, score: 10.01 }, { ds: 0, seq: 3, score: 10 }, ...list([4, 5, 6, 7, 8], 9)];
    const vector = list([3, 2, 1, 4, 5, 6, 7, 8], 0.9, 0.05); // the same top, 3 first
    expect(agreement(close, vector, FUSION.agreementDepth)).toBe(1);
    expect(order(fuseAdaptive(close, vector)).slice(0, 3)).toEqual([1, 3, 2]);
  });

  it('tells hits of different datasets apart', () => {
    const a: Scored[] = [{ ds: 0, seq: 1, score: 2 }, { ds: 1, seq: 1, score: 1 }];
    const v: Scored[] = [{ ds: 1, seq: 1, score: 0.9 }, { ds: 2, seq: 1, score: 0.8 }];
    const fused = fuseAdaptive(a, v);
    expect(fused.map((h) => `${h.ds}:${h.seq}`).sort()).toEqual(['0:1', '1:1', '2:1']);
    expect(fused.find((h) => h.ds === 2)!.score).toBeLessThan(Math.min(...fused.filter((h) => h.ds !== 2).map((h) => h.score)));
  });

  it('is deterministic and leaves its inputs alone', () => {
    const vector = list([2, 1, 3, 30, 4], 0.8, 0.02);
    const before = JSON.stringify([text, vector]);
    expect(fuseAdaptive(text, vector)).toEqual(fuseAdaptive(text, vector));
    expect(JSON.stringify([text, vector])).toBe(before);
  });
});
