import type { Threshold } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** the longest window a threshold may count over */
export const MAX_WINDOW_MS = 30 * UNIT_MS.d;

/** "10m" → 600000. */
export function windowMs(window: string): number {
  return Number(window.slice(0, -1)) * UNIT_MS[window.slice(-1) as keyof typeof UNIT_MS];
}

/** When a record happened: its own time, else when it was ingested. */
export function recordTimeMs(rec: StoredRecord): number {
  const t = rec.time ? Date.parse(rec.time) : NaN;
  return Number.isNaN(t) ? Date.parse(rec.created_at) : t;
}

/** A match a group keeps: its time, dataset and seq. */
export type Match = [timeMs: number, datasetId: string, seq: number];

/** A group's matches that no hit has spent yet, oldest first. */
export interface GroupState {
  matches: Match[];
  /** when it last changed (wall clock): a group untouched for long holds only stale matches */
  touched?: number;
}

/** The group a record falls in (null: it counts for no group). */
export function groupOf(threshold: Threshold, rec: StoredRecord, pattern: RegExp | null): string | null {
  let v: unknown;
  if (pattern) v = pattern.exec(rec.body)?.[1];
  else if (threshold.group_by) v = fieldValue(rec, threshold.group_by);
  else return '';
  if (v === undefined || v === null || v === '') return null;
  return (typeof v === 'object' ? JSON.stringify(v) : String(v)).slice(0, LIMITS.groupValue);
}

/**
 * Adds one match to its group and counts the window that ends at it. When that window holds
 * `count` unspent matches, they make a hit and are spent: each match counts toward one hit at
 * most. Matches a window or more older than the one added (or than now) count no more and go; a group
 * keeps at most `LIMITS.thresholdCount` matches (the oldest go first), so a record stamped far in
 * the future holds one place and blinds nothing.
 */
export function addMatch(state: GroupState, m: Match, count: number, window: number, nowMs = Date.now()): Match[] | null {
  // a match from the future prunes nothing: the clock bounds how far it reaches
  const horizon = Math.min(m[0], nowMs) - window;
  const all = state.matches.filter((x) => x[0] > horizon);
  all.splice(sortedIndex(all, m[0]), 0, m);
  const inWindow = all.filter((x) => x[0] > m[0] - window && x[0] <= m[0]);
  if (inWindow.length >= count) {
    const spent = new Set(inWindow);
    state.matches = all.filter((x) => !spent.has(x));
    return inWindow;
  }
  state.matches = all.slice(-LIMITS.thresholdCount);
  return null;
}

function sortedIndex(matches: Match[], time: number): number {
  let i = matches.length;
  while (i > 0 && matches[i - 1]![0] > time) i--;
  return i;
}
