import MiniSearch, { type Options } from 'minisearch';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SearchConfig } from '../../api/sources.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { MAX_KEY, prefixRange, type Store } from '../store/db.js';
import { normalizeTerm, tokenize } from './analyzer.js';
import { scoreClauses } from './bm25.js';
import type { SearchOptions, TextRecord, TextResult } from './protocol.js';
import { readSnapshot, writeSnapshot } from './snapshot.js';
import { keys } from '../store/keys.js';

/** What a snapshot says of itself: the configuration it was built with and the last seq it holds. */
interface SnapshotMeta { config: string; seq: number }
/** BM25+ parameters, chosen on SciFact's train queries (bench/tune-bm25.ts). */
export const BM25 = { k: 1.5, b: 1, d: 1 };
/** How much an expansion (a fuzzy or prefix neighbour of a query term absent from the index) weighs. */
const EXPANSION_WEIGHT = 0.5;

interface SearchableMapLike {
  has(key: string): boolean;
  atPrefix(prefix: string): Iterable<[string, unknown]> & { keys(): Iterable<string> };
  fuzzyGet(key: string, maxDistance: number): Map<string, [unknown, number]>;
}

/**
 * The BM25 index of one dataset, kept by the text worker. It holds every record with seq ≤ `seq`
 * and nothing else: records enter only in sequence order, so a snapshot plus a replay of later
 * records is always exact.
 */
export class TextIndex {
  seq = 0;
  private dirty = false;
  private mini: MiniSearch<TextRecord>;
  private readonly fields: string[];
  private readonly boost: Record<string, number>;
  private readonly configHash: string;

  constructor(
    private readonly store: Store,
    readonly tenantId: string,
    readonly datasetId: string,
    private readonly snapshotPath: string,
    config: SearchConfig,
  ) {
    this.fields = config.text_fields.map((f) => f.field);
    this.boost = Object.fromEntries(config.text_fields.map((f) => [f.field, f.boost]));
    this.configHash = createHash('sha1').update(JSON.stringify([config, BM25])).digest('hex');
    this.mini = new MiniSearch(this.options());
  }

  private options(): Options<TextRecord> {
    return {
      idField: 'seq',
      fields: this.fields,
      storeFields: [],
      extractField: (rec, field) => {
        if (field === 'seq') return rec.seq as unknown as string;
        if (field === 'body') return rec.body; // the common fields skip path resolution: this runs per record
        if (field === 'title') return rec.title ?? '';
        const v = fieldValue(rec as StoredRecord, field);
        return v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
      },
      tokenize,
      processTerm: normalizeTerm,
      searchOptions: { bm25: BM25, tokenize: (t) => [t], processTerm: (t) => t },
    };
  }

  /** Loads the snapshot when it matches this configuration, then replays newer records. */
  open(): this {
    this.store.env.resetReadTxn(); // another thread commits the records: read what is there now
    if (existsSync(this.snapshotPath)) {
      const snap = readable(() => readSnapshot<SnapshotMeta, TextRecord>(this.snapshotPath, this.options()));
      if (snap && snap.meta.config === this.configHash) {
        this.mini = snap.mini;
        this.seq = snap.meta.seq;
      } else {
        this.dirty = true;
      }
    }
    this.remove(this.tombstones());
    this.catchUp();
    return this;
  }

  /** Adds every record past `seq`, in order, from the store. */
  catchUp(): void {
    this.store.env.resetReadTxn();
    const range = this.store.records.getRange({ start: [this.tenantId, this.datasetId, this.seq + 1], end: [this.tenantId, this.datasetId, MAX_KEY] });
    for (const { value } of range) this.apply(value);
  }

  /** Adds at most `limit` of the records past `seq` up to `upto`, in order, from the store (a new generation filling); answers how many. */
  fill(upto: number, limit: number): number {
    this.store.env.resetReadTxn();
    let n = 0;
    for (const { value } of this.store.records.getRange({ start: [this.tenantId, this.datasetId, this.seq + 1], end: [this.tenantId, this.datasetId, upto + 1], limit })) {
      this.apply(value);
      n++;
    }
    return n;
  }

  /** Adds records just committed; falls back to the store when they do not follow on from `seq`. */
  add(records: TextRecord[]): void {
    if (records.length === 0) return;
    if (records[0].seq !== this.seq + 1) return this.catchUp();
    for (const rec of records) this.apply(rec);
  }

  private apply(rec: TextRecord): void {
    if (rec.seq <= this.seq) return;
    if (rec.replaces !== undefined && this.mini.has(rec.replaces)) this.mini.discard(rec.replaces);
    this.mini.add(rec);
    this.seq = rec.seq;
    this.dirty = true;
  }

  remove(seqs: Iterable<number>): void {
    for (const seq of seqs) {
      if (this.mini.has(seq)) {
        this.mini.discard(seq);
        this.dirty = true;
      }
    }
  }

  /** Query terms as the index holds them (stemmed, stop words gone), each with its expansions when it is not in the index. */
  private queryTerms(text: string, maxExpansions: number): { exact: string[]; expanded: string[] } {
    const index = (this.mini as unknown as { _index: SearchableMapLike })._index;
    const exact: string[] = [];
    const expanded: string[] = [];
    for (const token of tokenize(text)) {
      const term = normalizeTerm(token);
      if (term === null || exact.includes(term)) continue;
      exact.push(term);
      // numbers and ids do not get typo neighbours: a near id is another id, and the search is costly
      if (index.has(term) || maxExpansions === 0 || term.length < 3 || /\d/.test(term)) continue;
      const candidates = new Map<string, number>();
      for (const [key, [, distance]] of index.fuzzyGet(term, term.length >= 8 ? 2 : 1)) candidates.set(key, distance);
      for (const key of index.atPrefix(term).keys()) if (!candidates.has(key)) candidates.set(key, 3);
      const best = [...candidates].sort((a, b) => a[1] - b[1] || a[0].length - b[0].length).slice(0, maxExpansions);
      for (const [key] of best) if (!expanded.includes(key)) expanded.push(key);
    }
    return { exact, expanded };
  }

  /**
   * BM25 hits over the configured fields: every match in seq order, or the best `top` of them.
   * `extra` adds terms at a lower weight (semantic query expansion).
   */
  search(text: string, o: SearchOptions): TextResult {
    const { exact, expanded } = this.queryTerms(text, o.maxExpansions);
    if (exact.length === 0) return { seqs: new Float64Array(0), scores: new Float64Array(0), total: 0, terms: [], seq: this.seq };
    const more = [...new Set((o.extra?.terms ?? []).map(normalizeTerm))].filter((t): t is string => t !== null && !exact.includes(t) && !expanded.includes(t));
    const clauses = [
      ...exact.map((term) => ({ term, weight: 1 })),
      ...expanded.map((term) => ({ term, weight: EXPANSION_WEIGHT })),
      ...more.map((term) => ({ term, weight: o.extra!.weight })),
    ];
    return { ...scoreClauses(this.mini, clauses, this.boost, BM25, o.deadline, o.top), terms: [...exact, ...expanded, ...more], seq: this.seq };
  }

  /**
   * Writes the index to disk (temp file, fsync, rename) when it changed since the last snapshot.
   * Returns the seqs whose tombstones have done their work: the snapshot already lacks them.
   */
  snapshot(force = false): number[] {
    if (!this.dirty && !(force && !existsSync(this.snapshotPath))) return [];
    mkdirSync(dirname(this.snapshotPath), { recursive: true });
    writeSnapshot<SnapshotMeta>(this.snapshotPath, this.mini, { config: this.configHash, seq: this.seq });
    this.dirty = false;
    // a seq past `seq` may still be on its way in (an add queued behind this snapshot): its tombstone stays
    return this.tombstones().filter((seq) => seq <= this.seq && !this.mini.has(seq));
  }

  /** Removes its snapshot (a new generation given up, or an old one replaced). */
  destroy(): void {
    rmSync(this.snapshotPath, { force: true });
  }

  private tombstones(): number[] {
    const range = prefixRange(keys.textTomb(this.tenantId, this.datasetId));
    return [...this.store.meta.getKeys(range)].map((key) => key[3] as number);
  }
}

/** A snapshot that cannot be read (truncated, damaged) is no snapshot: the index is rebuilt from the store. */
function readable<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}
