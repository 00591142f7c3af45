import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { SearchConfig } from '../../api/sources.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import { MAX_KEY, prefixRange, type Key, type Store } from '../store/db.js';
import { normalizeTerm, tokenize } from './analyzer.js';
import { scoreSegments } from './bm25.js';
import { LiveSegment } from './liveSegment.js';
import type { SearchOptions, TextRecord, TextResult } from './protocol.js';
import { Segment } from './segment.js';
import { SegmentMerge } from './segmentMerge.js';
import { manifestPath, readManifest, removeSegmentFiles, segmentPath, writeManifest, type SegmentManifest } from './segmentManifest.js';
import { keys } from '../store/keys.js';

/** What a snapshot of the in-memory segment says of itself. */
interface SnapshotMeta {
  config: string;
  /** the last seq it holds */
  seq: number;
  /** the last seq of the sealed segments when it was written: it holds the records after it */
  base?: number;
  /** seqs of sealed segments its records replace */
  replaced?: number[];
}
/** BM25+ parameters, chosen on SciFact's train queries (bench/tune-bm25.ts). */
export const BM25 = { k: 1.5, b: 1, d: 1 };
/** How much an expansion (a fuzzy or prefix neighbour of a query term absent from the index) weighs. */
const EXPANSION_WEIGHT = 0.5;
/** Segments of one size tier merged at once: with 4, a dataset of n records has about 3·log4(n / sealed size) segments. */
const FAN_IN = 4;

/**
 * The BM25 index of one dataset, kept by the text worker. It holds every record with seq ≤ `seq`
 * and nothing else: records enter only in sequence order, so a snapshot plus a replay of later
 * records is always exact. The newest records are in an in-memory segment; once it holds
 * `segmentRecords` records it is sealed into a file whose postings stay on disk until a search
 * reads them, and sealed segments of one size are merged into one in the background.
 */
export class TextIndex {
  seq = 0;
  /** the last seq of the sealed segments */
  private base = 0;
  private dirty = false;
  private live: LiveSegment;
  private sealed: Segment[] = [];
  private nextFile = 1;
  private replaced: number[] = [];
  private merging: SegmentMerge | null = null;
  /** a record read from the store replaced one this index never read: see forgetGone */
  private missedLink = false;
  private readonly fields: string[];
  private readonly boost: number[];
  private readonly configHash: string;

  constructor(
    private readonly store: Store,
    readonly tenantId: string,
    readonly datasetId: string,
    private readonly snapshotPath: string,
    config: SearchConfig,
    private readonly segmentRecords = Infinity,
  ) {
    this.fields = config.text_fields.map((f) => f.field);
    this.boost = config.text_fields.map((f) => f.boost);
    this.configHash = createHash('sha1').update(JSON.stringify([config, BM25])).digest('hex');
    this.live = this.emptyLive();
  }

  private emptyLive(): LiveSegment {
    return new LiveSegment(this.fields, this.fieldText);
  }

  private readonly fieldText = (rec: TextRecord, f: number): string | null => {
    const field = this.fields[f];
    if (field === 'body') return rec.body; // the common fields skip path resolution: this runs per record
    if (field === 'title') return rec.title ?? null;
    const v = fieldValue(rec as StoredRecord, field);
    return v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v);
  };

  /** Opens the sealed segments and the snapshot when they match this configuration, then replays newer records. */
  open(): this {
    this.store.env.resetReadTxn(); // another thread commits the records: read what is there now
    const manifest = readManifest(this.snapshotPath);
    if (manifest?.config === this.configHash && this.openSegments(manifest)) {
      this.base = this.seq = manifest.sealed;
      this.nextFile = manifest.next;
    } else if (manifest) {
      // segments of another configuration, or damaged: rebuilt from the store
      rmSync(manifestPath(this.snapshotPath), { force: true });
      this.dirty = true;
    }
    removeSegmentFiles(this.snapshotPath, this.sealed.map((s) => basename(s.path)));
    let fromSnapshot = false;
    if (existsSync(this.snapshotPath)) {
      const snap = readable(() => LiveSegment.read<SnapshotMeta>(this.snapshotPath, this.fields, this.fieldText));
      if (snap && snap.meta.config === this.configHash && (snap.meta.base ?? 0) === this.base) {
        this.live = snap.live;
        this.seq = snap.meta.seq;
        this.replaced = snap.meta.replaced ?? [];
        for (const seq of this.replaced) this.removeSealed(seq);
        fromSnapshot = true;
      } else {
        this.dirty = true;
      }
    }
    // without the snapshot's list of the sealed records it replaced, the replay cannot tell them all
    if (!fromSnapshot && this.sealed.length > 0) this.missedLink = true;
    this.remove(this.tombstones());
    this.catchUp();
    return this;
  }

  /** Opens every segment the manifest lists, and applies what each one's records replace; false when one cannot be read. */
  private openSegments(manifest: SegmentManifest): boolean {
    try {
      for (const file of manifest.files) {
        const segment = Segment.open(join(dirname(this.snapshotPath), file));
        for (const seq of segment.meta.replaces) this.removeSealed(seq);
        this.sealed.push(segment);
      }
      return true;
    } catch {
      for (const s of this.sealed) s.close();
      this.sealed = [];
      return false;
    }
  }

  /**
   * Removes every record the store no longer holds. A record read from the store that replaces
   * one this index never read is the end of a chain (12 replaced 10, which had replaced 5: the
   * store keeps 12 alone, naming 10), and the index may still hold its start: the store decides.
   * Each goes as a replaced one does, so that the snapshot keeps it gone.
   */
  private forgetGone(): void {
    this.missedLink = false;
    const stored = this.store.records.getKeys({ start: [this.tenantId, this.datasetId, 0], end: [this.tenantId, this.datasetId, this.seq + 1] })[Symbol.iterator]();
    let at = stored.next();
    const storedSeq = () => (at.done ? Infinity : ((at.value as Key)[2] as number));
    for (const segment of [...this.sealed, this.live]) {
      for (let doc = 0; doc < segment.slots; doc++) {
        if (!segment.isLive(doc)) continue;
        const seq = segment.seq(doc);
        while (storedSeq() < seq) at = stored.next();
        if (storedSeq() === seq) continue;
        this.forget(seq);
        this.dirty = true;
      }
    }
  }

  /** Adds every record past `seq`, in order, from the store. */
  catchUp(): void {
    this.store.env.resetReadTxn();
    const range = this.store.records.getRange({ start: [this.tenantId, this.datasetId, this.seq + 1], end: [this.tenantId, this.datasetId, MAX_KEY] });
    for (const { value } of range) this.apply(value);
    if (this.missedLink) this.forgetGone();
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
    if (rec.replaces !== undefined) {
      if (rec.replaces > this.seq) this.missedLink = true; // one this index never read
      else this.forget(rec.replaces);
    }
    this.live.add(rec);
    this.seq = rec.seq;
    this.dirty = true;
    if (this.live.docs >= this.segmentRecords) this.seal();
  }

  /** A record replaced: out of the index; one a sealed file holds is listed for the snapshot, which keeps it gone. */
  private forget(seq: number): void {
    if (!this.live.remove(seq) && this.removeSealed(seq)) this.replaced.push(seq);
  }

  remove(seqs: Iterable<number>): void {
    for (const seq of seqs) {
      if (this.live.remove(seq)) this.dirty = true;
      else this.removeSealed(seq);
    }
  }

  private removeSealed(seq: number): boolean {
    return this.sealed.some((s) => s.remove(seq));
  }

  /**
   * The in-memory segment becomes a sealed file; the manifest that lists it is the commit point
   * (a crash before it replays those records from the store into memory again).
   */
  private seal(): void {
    const path = segmentPath(this.snapshotPath, this.nextFile++);
    mkdirSync(dirname(path), { recursive: true });
    this.live.write(path, { replaces: this.replaced });
    this.sealed.push(Segment.open(path));
    this.base = this.seq;
    this.live = this.emptyLive();
    this.replaced = [];
    this.writeManifest();
    this.writeLive();
  }

  private writeManifest(): void {
    writeManifest(this.snapshotPath, { config: this.configHash, sealed: this.base, next: this.nextFile, files: this.sealed.map((s) => basename(s.path)) });
  }

  /**
   * Merges for at most until `until` (epoch ms) when segments of one size tier are FAN_IN or more;
   * answers whether there is more to do.
   */
  mergeStep(until: number): boolean {
    if (!this.merging) {
      const window = this.mergeable();
      if (!window) return false;
      this.merging = new SegmentMerge(window, segmentPath(this.snapshotPath, this.nextFile++));
    }
    const merge = this.merging;
    try {
      if (!merge.step(until)) return true;
    } catch (err) {
      this.merging = null;
      merge.abandon();
      throw err;
    }
    this.merging = null;
    const merged = Segment.open(merge.path);
    for (const s of merge.sources) for (const doc of s.deleted) merged.remove(s.seq(doc)); // removed while it ran
    const at = this.sealed.indexOf(merge.sources[0]);
    this.sealed.splice(at, merge.sources.length, merged);
    this.writeManifest();
    for (const s of merge.sources) s.destroy();
    this.dirty = true; // the next snapshot answers the tombstones the merge made unnecessary
    return this.mergeable() !== null;
  }

  /** The oldest run of FAN_IN neighbouring segments of one size tier (sizes within a factor FAN_IN). */
  private mergeable(): Segment[] | null {
    const tier = (s: Segment) => Math.floor(Math.log(Math.max(1, s.slots / Math.min(this.segmentRecords, 1e9))) / Math.log(FAN_IN));
    for (let i = 0; i + FAN_IN <= this.sealed.length; i++) {
      const window = this.sealed.slice(i, i + FAN_IN);
      if (window.every((s) => tier(s) === tier(window[0]))) return window;
    }
    return null;
  }

  /** Query terms as the index holds them (stemmed, stop words gone), each with its expansions when it is not in the index. */
  private queryTerms(text: string, maxExpansions: number): { exact: string[]; expanded: string[] } {
    const exact: string[] = [];
    const expanded: string[] = [];
    for (const token of tokenize(text)) {
      const term = normalizeTerm(token);
      if (term === null || exact.includes(term)) continue;
      exact.push(term);
      // numbers and ids do not get typo neighbours: a near id is another id, and the search is costly
      if (this.hasTerm(term) || maxExpansions === 0 || term.length < 3 || /\d/.test(term)) continue;
      const best = [...this.neighbours(term)].sort((a, b) => a[1] - b[1] || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1)).slice(0, maxExpansions);
      for (const [key] of best) if (!expanded.includes(key)) expanded.push(key);
    }
    return { exact, expanded };
  }

  private hasTerm(term: string): boolean {
    return this.live.terms.has(term) || this.sealed.some((s) => s.hasTerm(term));
  }

  /** Terms of every segment within a typo of `term` (distance 1, or 2 for long words), or that it begins (distance 3). */
  private neighbours(term: string): Map<string, number> {
    const distance = term.length >= 8 ? 2 : 1;
    const found = new Map<string, number>();
    const keep = (key: string, d: number) => found.set(key, Math.min(d, found.get(key) ?? d));
    for (const [key, [, d]] of this.live.terms.fuzzyGet(term, distance)) keep(key, d);
    for (const key of this.live.terms.atPrefix(term).keys()) keep(key, 3);
    for (const s of this.sealed) {
      for (const [key, d] of s.terms.fuzzy(term, distance)) keep(key, d);
      for (const key of s.terms.withPrefix(term)) keep(key, 3);
    }
    return found;
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
    const scored = scoreSegments([...this.sealed, this.live], clauses, this.boost, BM25, o.deadline, o.top);
    return { ...scored, terms: [...exact, ...expanded, ...more], seq: this.seq };
  }

  /** How many sealed segments it has (for the bench and the tests). */
  get segments(): number {
    return this.sealed.length;
  }

  /**
   * Writes the in-memory segment to disk (temp file, fsync, rename) when it changed since the last
   * snapshot. Returns the seqs whose tombstones have done their work: no segment holds them.
   */
  snapshot(force = false): number[] {
    if (!this.dirty && !(force && !existsSync(this.snapshotPath))) return [];
    this.writeLive();
    // a seq past `seq` may still be on its way in (an add queued behind this snapshot): its tombstone stays
    return this.tombstones().filter((seq) => seq <= this.seq && !this.live.has(seq) && !this.sealed.some((s) => s.holds(seq)));
  }

  private writeLive(): void {
    mkdirSync(dirname(this.snapshotPath), { recursive: true });
    this.live.write<SnapshotMeta>(this.snapshotPath, { config: this.configHash, seq: this.seq, base: this.base, replaced: this.replaced });
    this.dirty = false;
  }

  /** Closes its segment files. */
  close(): void {
    this.merging?.abandon();
    this.merging = null;
    for (const s of this.sealed) s.close();
  }

  /** Removes its files (a new generation given up, or an old one replaced). */
  destroy(): void {
    this.close();
    removeTextFiles(this.snapshotPath);
  }

  private tombstones(): number[] {
    const range = prefixRange(keys.textTomb(this.tenantId, this.datasetId));
    return [...this.store.meta.getKeys(range)].map((key) => key[3] as number);
  }
}

/** Removes a text index's files: its snapshot, manifest and segments. */
export function removeTextFiles(snapshotPath: string): void {
  rmSync(snapshotPath, { force: true });
  rmSync(manifestPath(snapshotPath), { force: true });
  removeSegmentFiles(snapshotPath);
}

/** A snapshot that cannot be read (truncated, damaged) is no snapshot: the index is rebuilt from the store. */
function readable<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}
