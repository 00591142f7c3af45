import { ulid } from 'ulid';

/** Prefixed ids that sort by creation time (`run_…`, `srch_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${ulid().toLowerCase()}`;
}

export function now(): string {
  return new Date().toISOString();
}

export const DATASET_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
