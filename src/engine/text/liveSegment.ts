import SearchableMap from 'minisearch/SearchableMap';
import { normalizeTerm, tokenize } from './analyzer.js';
import type { SegmentView } from './bm25.js';
import { partitionPoint } from './partitionPoint.js';
import type { TextRecord } from './protocol.js';
import { Segment } from './segment.js';
import { SegmentWriter } from './segmentFile.js';

/** A term's postings per field: (doc, tf) pairs one after another, docs ascending. */
type Postings = (number[] | undefined)[];

/** A record's text in one field; null when it has none. */
export type FieldText = (rec: TextRecord, field: number) => string | null;

/**
 * The newest records of a text index, in memory until sealed into a segment file. It scores as
 * MiniSearch does — a field's length is its distinct tokens — but keeps each term's postings as
 * one growing array of (doc, tf) numbers instead of a map per term and field, and a document is
 * its position: a log line adds a few dozen numbers and no object.
 */
export class LiveSegment implements SegmentView {
  /** the terms in a tree, for fuzzy and prefix lookups; a term's entry is added once, when first seen */
  readonly terms = new SearchableMap<Postings>();
  readonly totalLength: number[];
  docs = 0;
  private readonly byTerm = new Map<string, Postings>();
  /** doc → seq, ascending: records enter in seq order */
  private readonly seqs: number[] = [];
  /** doc × fields + field → distinct tokens */
  private readonly lengths: number[] = [];
  private readonly removed = new Set<number>();
  /** a field's distinct tokens with their counts, and its analysed terms, for the record being added */
  private readonly tokens = new Map<string, number>();
  private readonly termCounts = new Map<string, number>();

  private readonly fieldCount: number;

  constructor(
    private readonly fields: string[],
    private readonly text: FieldText,
  ) {
    this.fieldCount = fields.length;
    this.totalLength = new Array<number>(this.fieldCount).fill(0);
  }

  get slots(): number {
    return this.seqs.length;
  }
  get clean(): boolean {
    return this.removed.size === 0;
  }

  add(rec: TextRecord): void {
    const doc = this.seqs.length;
    if (doc > 0 && rec.seq <= this.seqs[doc - 1]) throw new Error(`record ${rec.seq} is not after ${this.seqs[doc - 1]}`);
    // read first: a field that cannot be read leaves the segment as it was, not a record half added
    const values = this.fields.map((_, field) => this.text(rec, field));
    this.seqs.push(rec.seq);
    const tokens = this.tokens;
    const terms = this.termCounts;
    for (let field = 0; field < this.fieldCount; field++) {
      const value = values[field];
      tokens.clear();
      if (value) for (const token of tokenize(value)) tokens.set(token, (tokens.get(token) ?? 0) + 1);
      this.lengths.push(tokens.size);
      this.totalLength[field] += tokens.size;
      terms.clear();
      for (const [token, n] of tokens) {
        const term = normalizeTerm(token);
        if (term) terms.set(term, (terms.get(term) ?? 0) + n);
      }
      for (const [term, tf] of terms) {
        let postings = this.byTerm.get(term);
        if (!postings) {
          postings = new Array(this.fieldCount);
          this.byTerm.set(term, postings);
          this.terms.set(term, postings);
        }
        (postings[field] ??= []).push(doc, tf);
      }
    }
    this.docs++;
  }

  /** Whether it holds `seq`, not removed. */
  has(seq: number): boolean {
    const doc = this.position(seq);
    return doc >= 0 && !this.removed.has(doc);
  }

  /** Removes the record `seq` if this segment holds it; answers whether it did. */
  remove(seq: number): boolean {
    const doc = this.position(seq);
    if (doc < 0 || this.removed.has(doc)) return false;
    this.removed.add(doc);
    this.docs--;
    for (let f = 0; f < this.fieldCount; f++) this.totalLength[f] -= this.length(doc, f);
    return true;
  }

  postings(term: string, field: number): number[] | undefined {
    return this.byTerm.get(term)?.[field];
  }

  isLive(doc: number): boolean {
    return !this.removed.has(doc);
  }

  length(doc: number, field: number): number {
    return this.lengths[doc * this.fieldCount + field];
  }

  seq(doc: number): number {
    return this.seqs[doc];
  }

  private position(seq: number): number {
    const at = partitionPoint(0, this.seqs.length, (k) => this.seqs[k] < seq);
    return this.seqs[at] === seq ? at : -1;
  }

  /** Writes the records not removed as a segment file (sealed, or the snapshot it is reopened from). */
  write<M>(path: string, meta: M): void {
    const position = new Int32Array(this.slots).fill(-1);
    const seqs = new Float64Array(this.docs);
    const lengths = new Uint32Array(this.docs * this.fieldCount);
    let n = 0;
    for (let doc = 0; doc < this.slots; doc++) {
      if (this.removed.has(doc)) continue;
      position[doc] = n;
      seqs[n] = this.seqs[doc];
      for (let f = 0; f < this.fieldCount; f++) lengths[n * this.fieldCount + f] = this.length(doc, f);
      n++;
    }
    const writer = new SegmentWriter(path, this.fieldCount);
    try {
      for (const term of [...this.byTerm.keys()].sort()) {
        const postings = this.byTerm.get(term)!;
        const perField: Uint32Array[] = [];
        let any = false;
        for (let f = 0; f < this.fieldCount; f++) {
          const list = postings[f] ?? [];
          const pairs = new Uint32Array(list.length);
          let k = 0;
          for (let i = 0; i < list.length; i += 2) {
            if (position[list[i]] < 0) continue;
            pairs[k++] = position[list[i]];
            pairs[k++] = list[i + 1];
          }
          any ||= k > 0;
          perField.push(pairs.subarray(0, k));
        }
        if (any) writer.term(term, perField);
      }
      writer.finish(seqs, lengths, this.fields, meta);
    } catch (err) {
      writer.abandon();
      throw err;
    }
  }

  /** Reads a file `write` wrote back into memory, with its meta; it must be of the same fields. */
  static read<M>(path: string, fields: string[], text: FieldText): { live: LiveSegment; meta: M } {
    const file = Segment.open(path);
    try {
      if (JSON.stringify(file.fields) !== JSON.stringify(fields)) throw new Error(`${path} holds the fields ${file.fields.join(', ')}, not ${fields.join(', ')}`);
      const fieldCount = fields.length;
      const live = new LiveSegment(fields, text);
      for (let doc = 0; doc < file.slots; doc++) {
        live.seqs.push(file.seq(doc));
        for (let f = 0; f < fieldCount; f++) live.lengths.push(file.length(doc, f));
      }
      live.docs = file.slots;
      for (let f = 0; f < fieldCount; f++) live.totalLength[f] = file.totalLength[f];
      const postingsOf = file.inOrder();
      for (let t = 0; t < file.terms.size; t++) {
        const term = file.terms.at(t, false);
        const postings: Postings = new Array(fieldCount);
        for (let f = 0; f < fieldCount; f++) {
          const pairs = postingsOf(t, f);
          if (pairs.length > 0) postings[f] = Array.from(pairs);
        }
        live.byTerm.set(term, postings);
        live.terms.set(term, postings);
      }
      return { live, meta: file.meta as M };
    } finally {
      file.close();
    }
  }
}
