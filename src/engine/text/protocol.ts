import type { SearchConfig } from '../../api/sources.js';
import type { StoredRecord } from '../records.js';

/** What the text worker needs of a record: its sequence, what it replaces, and the fields it indexes. */
export type TextRecord = Pick<StoredRecord, 'seq' | 'replaces' | 'title' | 'body'> & Partial<Pick<StoredRecord, 'id' | 'time' | 'metadata'>>;

/**
 * The matches of a text search: every one in seq order, or the best `top` of them, best first;
 * `total` counts them all; `terms` are the index terms it looked up (for snippets).
 */
export interface TextResult { seqs: Float64Array; scores: Float64Array; total: number; terms: string[]; /** the last seq the index held */ seq: number }

export interface SearchOptions {
  maxExpansions: number;
  extra?: { terms: string[]; weight: number };
  /** epoch ms past which the search stops with a timeout */
  deadline: number;
  top?: number;
}

/** Which dataset's index a request is for, with the configuration to open it by. */
export interface Target { t: string; d: string; config: SearchConfig }

/** A new generation of a dataset's index, held by the worker beside the serving one until promoted. */
export interface Staged { t: string; d: string; generation: number }

/** A request to the text worker. Requests are handled one at a time, in the order they were sent. */
export type TextRequest =
  | { op: 'add'; target: Target; records: TextRecord[] }
  | { op: 'catchUp'; target: Target }
  | { op: 'search'; target: Target; text: string; options: SearchOptions }
  | { op: 'remove'; target: Target; seqs: number[] }
  /** writes the snapshot; answers the seqs whose tombstones it made unnecessary */
  | { op: 'snapshot'; target: Target }
  | { op: 'snapshotAll' }
  | { op: 'forget'; t: string; d?: string }
  /** starts generation `generation`, empty */
  | { op: 'stage'; target: Target; generation: number }
  /** adds up to `limit` records past what the staged index holds, up to `upto`; answers how many */
  | { op: 'fill'; staged: Staged; upto: number; limit: number }
  | { op: 'seal'; staged: Staged }
  | { op: 'discard'; staged: Staged }
  /** the staged generation (or, after a restart, the one on disk) serves; other generations' files go */
  | { op: 'promote'; target: Target; generation: number };

/** `code` is the error's code when it has one (ENOSPC…), so that the main thread can tell a full disk. */
export type TextReply =
  | { id: number; value: unknown }
  | { id: number; error: string; code?: string | number; timeout?: true }
  /** work of its own that failed (a background merge), for the log */
  | { problem: string; error: string; t: string; d: string };
