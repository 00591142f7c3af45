import { closeSync, rmSync } from 'node:fs';
import type { SegmentView } from './bm25.js';
import { LruCache } from './lruCache.js';
import { partitionPoint } from './partitionPoint.js';
import { openSegmentFile, readPostings, readTermBlock, SequentialPostings, TERM_BLOCK, type SegmentContents, type TermBlock } from './segmentFile.js';
import { SortedTerms } from './sortedTerms.js';

/** What a sealed segment says of itself. */
export interface SegmentMeta {
  /** seqs of older segments that records of this one replace (they stay gone after a restart) */
  replaces: number[];
}

const postingsCache = new LruCache<Uint32Array>(64 * 2 ** 20);
const blockCache = new LruCache<TermBlock>(16 * 2 ** 20);
let opened = 0;

/**
 * A sealed, read-only part of a text index: its seqs and field lengths in memory, its terms and
 * postings in the file, read when a search needs them. Records removed since it was written are
 * tombstones here, applied at search time and dropped when it is merged.
 */
export class Segment implements SegmentView {
  readonly terms: SortedTerms;
  readonly fields: string[];
  readonly meta: SegmentMeta;
  docs: number;
  readonly totalLength: number[];
  /** positions of removed records */
  readonly deleted = new Set<number>();
  private readonly uid = `${++opened}:`;
  private fd: number;
  private readonly c: SegmentContents<SegmentMeta>;
  /** the block read last: a merge or a fuzzy walk reads the terms in order */
  private recent: { b: number; block: TermBlock } | null = null;

  private constructor(readonly path: string, fd: number, contents: SegmentContents<SegmentMeta>) {
    this.fd = fd;
    this.c = contents;
    this.terms = new SortedTerms(contents.footer.terms, contents.firsts, (b, cached) => this.block(b, cached));
    this.fields = contents.footer.fields;
    this.meta = contents.footer.meta;
    this.docs = contents.seqs.length;
    this.totalLength = this.fields.map((_, f) => {
      let sum = 0;
      for (let doc = 0; doc < this.docs; doc++) sum += contents.lengths[doc * this.fields.length + f];
      return sum;
    });
  }

  static open(path: string): Segment {
    const { fd, contents } = openSegmentFile<SegmentMeta>(path);
    return new Segment(path, fd, contents);
  }

  get slots(): number {
    return this.c.seqs.length;
  }
  get firstSeq(): number {
    return this.c.seqs[0];
  }
  get lastSeq(): number {
    return this.c.seqs[this.c.seqs.length - 1];
  }

  seq(doc: number): number {
    return this.c.seqs[doc];
  }

  length(doc: number, field: number): number {
    return this.c.lengths[doc * this.fields.length + field];
  }

  get clean(): boolean {
    return this.deleted.size === 0;
  }

  isLive(doc: number): boolean {
    return !this.deleted.has(doc);
  }

  hasTerm(term: string): boolean {
    return this.terms.indexOf(term) >= 0;
  }

  /** (doc, tf) pairs of `term` in field `field`, docs ascending; empty when it has none. */
  postings(term: string, field: number): Uint32Array {
    const t = this.terms.indexOf(term);
    if (t < 0) return EMPTY;
    const { start, pairs } = this.postingRange(t, field, true);
    return pairs === 0 ? EMPTY : postingsCache.get(`${this.uid}${t}:${field}`, () => readPostings(this.fd, start, pairs));
  }

  /** Postings read in term order, outside the caches (a merge reads every list once: it would only push the searches' out). */
  inOrder(): (t: number, field: number) => Uint32Array {
    const reader = new SequentialPostings(this.fd);
    return (t, field) => {
      const { start, pairs } = this.postingRange(t, field, false);
      return pairs === 0 ? EMPTY : reader.read(start, pairs);
    };
  }

  private postingRange(t: number, field: number, cached: boolean): { start: number; pairs: number } {
    const starts = this.block(Math.floor(t / TERM_BLOCK), cached).postingStarts;
    const k = (t % TERM_BLOCK) * this.fields.length + field;
    return { start: starts[k], pairs: starts[k + 1] - starts[k] };
  }

  private block(b: number, cached = true): TermBlock {
    if (this.recent?.b === b) return this.recent.block;
    const read = () => readTermBlock(this.fd, this.c, b);
    const block = cached ? blockCache.get(`${this.uid}${b}`, read) : read();
    this.recent = { b, block };
    return block;
  }

  /** The position of `seq`, or -1. */
  position(seq: number): number {
    const seqs = this.c.seqs;
    const at = partitionPoint(0, seqs.length, (k) => seqs[k] < seq);
    return seqs[at] === seq ? at : -1;
  }

  /** Whether the file holds `seq`, removed or not (its tombstone is needed until a merge drops it). */
  holds(seq: number): boolean {
    return this.position(seq) >= 0;
  }

  /** Removes the record `seq` if this segment holds it; answers whether it did. */
  remove(seq: number): boolean {
    const doc = this.position(seq);
    if (doc < 0 || this.deleted.has(doc)) return false;
    this.deleted.add(doc);
    this.docs--;
    for (let f = 0; f < this.fields.length; f++) this.totalLength[f] -= this.length(doc, f);
    return true;
  }

  close(): void {
    postingsCache.drop(this.uid);
    blockCache.drop(this.uid);
    this.recent = null;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** Closes it and removes its file (merged into another, or the index dropped). */
  destroy(): void {
    this.close();
    rmSync(this.path, { force: true });
  }
}

const EMPTY = new Uint32Array(0);
