import type { Threshold } from '../../api/detections.js';
import { LIMITS } from '../../api/limits.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

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

/** A group's matches within one window of its newest, none of them already part of a hit. */
export interface GroupState {
  matches: Match[];
  /** the end of the group's last hit's window: matches at or before it were counted */
  fired_until: number | null;
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
 * Adds one match to its group; answers the matches of the window that reached `count_gte`, once:
 * they are then spent, so the windows of two hits of one group never overlap. A match older than
 * the group's newest by a window or more (or than its last hit) counts for nothing.
 */
export function addMatch(state: GroupState, m: Match, count: number, window: number): Match[] | null {
  if (state.fired_until !== null && m[0] <= state.fired_until) return null;
  const at = sortedIndex(state.matches, m[0]);
  state.matches.splice(at, 0, m);
  const newest = state.matches[state.matches.length - 1]![0];
  const from = state.matches.findIndex((x) => x[0] > newest - window);
  state.matches.splice(0, from);
  if (state.matches.length < count) return null;
  const spent = state.matches;
  state.matches = [];
  state.fired_until = newest;
  return spent;
}

function sortedIndex(matches: Match[], time: number): number {
  let i = matches.length;
  while (i > 0 && matches[i - 1]![0] > time) i--;
  return i;
}
