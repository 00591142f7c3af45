/** The sliding-window count of a threshold detection, on its own: what a group keeps and when it fires. */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { addMatch, type GroupState, type Match } from '../src/engine/detections/threshold.js';

const MIN = 60_000;
const T0 = Date.parse('2026-11-24T10:00:00Z');
const NOW = T0 + 60 * MIN;
let seq = 0;
const at = (ms: number): Match => [ms, 'd', ++seq];
/** feeds matches in order; answers how many each hit spent */
const feed = (state: GroupState, times: number[], count = 3, window = 10 * MIN) => times.map((t) => addMatch(state, at(t), count, window, NOW)).filter((h) => h !== null).map((h) => h!.length);

describe('threshold windows', () => {
  it('fire when count matches fall within one window ending at a match, and spend them', () => {
    const s: GroupState = { matches: [] };
    expect(feed(s, [T0, T0 + 4 * MIN, T0 + 11 * MIN, T0 + 15 * MIN])).toEqual([]); // never three within 10 minutes
    expect(feed(s, [T0 + 16 * MIN])).toEqual([3]);
    expect(s.matches).toEqual([]);
    expect(feed(s, [T0 + 17 * MIN, T0 + 18 * MIN])).toEqual([]); // spent matches count no more
  });

  it('matches at the same instant each count (a batch without times shares one)', () => {
    const s: GroupState = { matches: [] };
    expect(feed(s, Array(10).fill(T0), 2)).toEqual([2, 2, 2, 2, 2]);
    expect(feed({ matches: [] }, Array(10).fill(T0), 1)).toHaveLength(10);
  });

  it('a match stamped far in the future blinds nothing', () => {
    const s: GroupState = { matches: [] };
    expect(feed(s, [Date.parse('2099-01-01T00:00:00Z')])).toEqual([]);
    expect(feed(s, [T0, T0 + MIN, T0 + 2 * MIN])).toEqual([3]);
    expect(s.matches).toHaveLength(1); // it holds one place
  });

  it('a late match counts in the window that ends at it', () => {
    const s: GroupState = { matches: [] };
    expect(feed(s, [T0 + 30 * MIN, T0 + 5 * MIN, T0 + 6 * MIN])).toEqual([]);
    expect(feed(s, [T0 + 7 * MIN])).toEqual([3]);
    expect(s.matches.map((m) => m[0])).toEqual([T0 + 30 * MIN]);
  });

  it('a group keeps at most thresholdCount matches', () => {
    const s: GroupState = { matches: [] };
    feed(s, Array.from({ length: LIMITS.thresholdCount + 50 }, (_, i) => T0 - i * 1000), LIMITS.thresholdCount + 1, 60 * MIN);
    expect(s.matches.length).toBeLessThanOrEqual(LIMITS.thresholdCount);
  });
});
