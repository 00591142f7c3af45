import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/** Prefixed ids that sort by creation time (`run_…`, `srch_…`), in this process even within one millisecond (the hits of one batch). */
export function newId(prefix: string): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

export function now(): string {
  return new Date().toISOString();
}

export const DATASET_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
