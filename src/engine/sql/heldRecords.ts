import type { StoredRecord } from '../records.js';

/** Records held before a load: one DuckDB transaction per this many, not one per ingest batch. */
export const HELD_ROWS = 20_000;

const key = (t: string, d: string) => `${t}\0${d}`;

/**
 * The records ingest just committed, held per dataset so the SQL index loads them from memory
 * instead of reading them back from the store after the run. A deletion spoils what a dataset
 * holds (a held record may be gone from the store): nothing more is held for it until a catch-up
 * from the store, which is what every held record is a shortcut for.
 */
export class HeldRecords {
  private readonly held = new Map<string, StoredRecord[]>();
  private readonly spoiled = new Set<string>();

  /** Holds the records; answers what to load now (a load's worth) or null. */
  add(t: string, d: string, records: StoredRecord[]): StoredRecord[] | null {
    const k = key(t, d);
    if (this.spoiled.has(k) || records.length === 0) return null;
    const held = this.held.get(k) ?? [];
    for (const rec of records) held.push(rec);
    if (held.length < HELD_ROWS) {
      this.held.set(k, held);
      return null;
    }
    this.held.delete(k);
    return held;
  }

  /** What the dataset holds, taken out. */
  take(t: string, d: string): StoredRecord[] {
    const k = key(t, d);
    const held = this.held.get(k) ?? [];
    this.held.delete(k);
    return held;
  }

  spoil(t: string, d: string): void {
    this.held.delete(key(t, d));
    this.spoiled.add(key(t, d));
  }

  isSpoiled(t: string, d: string): boolean {
    return this.spoiled.has(key(t, d));
  }

  /** A catch-up from the store is about to read it: what was held, or spoiled, is covered by that. */
  reset(t: string, d: string): void {
    this.held.delete(key(t, d));
    this.spoiled.delete(key(t, d));
  }

  /** The run of `records` that follows on from `seq` without a gap: a table holds every record up to its seq. */
  static following(records: StoredRecord[], seq: number): StoredRecord[] {
    const start = records.findIndex((r) => r.seq === seq + 1);
    if (start < 0) return [];
    let end = start + 1;
    while (end < records.length && records[end].seq === records[end - 1].seq + 1) end++;
    return records.slice(start, end);
  }
}
