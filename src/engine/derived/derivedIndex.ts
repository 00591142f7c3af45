import type { RunState } from '../ingest/runs.js';
import type { StoredRecord } from '../records.js';

export type IndexName = 'text' | 'vector' | 'sql';
export const INDEX_NAMES: readonly IndexName[] = ['text', 'vector', 'sql'];

/** A new generation of one dataset's index, built off to the side while the current one serves. */
export interface Build {
  /** Adds the records it lacks up to `upto`, in sequence order; answers how many went in. `stop` is called between slices and may throw to end it. */
  fill(upto: number, stop?: () => void): Promise<number>;
  /** Writes it to disk: from here a crash keeps it, ready to serve once the dataset points at it. */
  seal(): Promise<void>;
  /** Removes it: a reindex that was cancelled or failed leaves nothing behind. */
  discard(): Promise<void>;
}

/**
 * What every index derived from the records implements. Each holds exactly the records up to a
 * sequence, catches up from the store, and keeps its own files: the engine holds them in one list
 * (DerivedIndexes) and ingest, deletion, retention, tenant removal, reindex and close loop over it.
 */
export interface DerivedIndex {
  readonly name: IndexName;
  /** Records an ingest batch just committed, in sequence order: an index may take them now, or at `follow`. */
  added(t: string, d: string, records: StoredRecord[]): Promise<void>;
  /** Every record of the run is committed: the index catches up, may set the run's `ready_for` flag and save it. */
  follow(run: RunState, save: () => void): Promise<void>;
  /** Catches up with every record committed. */
  catchUp(t: string, d: string): Promise<void>;
  /** Inside the transaction that deletes records: what the index needs to lose them should it be closed now (tombstones). */
  deleting(t: string, d: string, seqs: number[]): void;
  /** Records gone from the store: they leave the serving generation and any build in progress. */
  removed(t: string, d: string, seqs: number[]): Promise<void>;
  /** The dataset is gone: its index, its files and its own keys go. */
  dropDataset(t: string, d: string): Promise<void>;
  dropTenant(t: string): Promise<void>;
  /** The generation serving the dataset; null when this index keeps nothing for it (no vectors configured). */
  generation(t: string, d: string): number | null;
  /** Starts generation `g` of the dataset, empty (whatever a crashed attempt left of it goes first). */
  build(t: string, d: string, g: number): Promise<Build>;
  /** Inside the LMDB transaction that promotes: points the dataset at generation `g`. That commit is the switch. */
  point(t: string, d: string, g: number): void;
  /** After that commit: serves generation `g` with the records committed since it was filled, and removes the old one. */
  promote(t: string, d: string, g: number): Promise<void>;
  /** Writes the dataset's index to disk when it changed. */
  snapshot(t: string, d: string): Promise<void>;
  close(): Promise<void>;
}

/** Something else derived from records that must lose deleted ones (the copies views hold): `ids` in the order of `seqs`. */
export type RemovalListener = (t: string, d: string, seqs: number[], ids: string[]) => Promise<void>;

/** Something that acts on committed records without being an index (detections): it keeps its own cursor and catches up from the store. */
export interface RecordFollower {
  added(t: string, d: string, records: StoredRecord[]): Promise<void>;
  catchUp(t: string, d: string): Promise<void>;
}
