import type { Segment, SegmentMeta } from './segment.js';
import { SegmentWriter } from './segmentFile.js';

/**
 * Merges neighbouring sealed segments into one file, a few terms at a time so that the worker
 * answers searches and takes records in between. Records removed when it started are left out;
 * those removed while it runs are removed from the result when it is swapped in. Until then the
 * old segments serve, and a crash leaves only a temp file behind.
 */
export class SegmentMerge {
  private readonly writer: SegmentWriter;
  private readonly positions: Int32Array[];
  private readonly cursors: number[];
  private readonly readers: ((t: number, field: number) => Uint32Array)[];
  private readonly seqs: Float64Array;
  private readonly lengths: Uint32Array;
  private readonly fieldCount: number;

  constructor(readonly sources: Segment[], readonly path: string) {
    const fields = sources[0].fields;
    this.fieldCount = fields.length;
    const live = sources.reduce((n, s) => n + s.docs, 0);
    this.seqs = new Float64Array(live);
    this.lengths = new Uint32Array(live * this.fieldCount);
    let n = 0;
    this.positions = sources.map((s) => {
      const position = new Int32Array(s.slots).fill(-1);
      for (let doc = 0; doc < s.slots; doc++) {
        if (!s.isLive(doc)) continue;
        position[doc] = n;
        this.seqs[n] = s.seq(doc);
        for (let f = 0; f < this.fieldCount; f++) this.lengths[n * this.fieldCount + f] = s.length(doc, f);
        n++;
      }
      return position;
    });
    this.cursors = sources.map(() => 0);
    this.readers = sources.map((s) => s.inOrder());
    this.writer = new SegmentWriter(path, this.fieldCount);
  }

  /** Merges terms until `until` (epoch ms); answers true once the file is written. */
  step(until: number): boolean {
    for (let i = 0; ; i++) {
      if ((i & 255) === 0 && Date.now() > until) return false;
      let least: string | null = null;
      this.sources.forEach((s, k) => {
        if (this.cursors[k] < s.terms.size) {
          const term = s.terms.at(this.cursors[k], false);
          if (least === null || term < least) least = term;
        }
      });
      if (least === null) break;
      this.mergeTerm(least);
    }
    const first = this.sources[0].firstSeq;
    const replaces = [...new Set(this.sources.flatMap((s) => s.meta.replaces))].filter((seq) => seq < first);
    this.writer.finish<SegmentMeta>(this.seqs, this.lengths, this.sources[0].fields, { replaces });
    return true;
  }

  abandon(): void {
    this.writer.abandon();
  }

  private mergeTerm(term: string): void {
    const holders: number[] = [];
    this.sources.forEach((s, k) => {
      if (this.cursors[k] < s.terms.size && s.terms.at(this.cursors[k], false) === term) holders.push(k);
    });
    let any = false;
    const perField: Uint32Array[] = [];
    for (let f = 0; f < this.fieldCount; f++) {
      const lists = holders.map((k) => this.readers[k](this.cursors[k], f));
      // sources are neighbours in seq order, so their lists one after another keep docs ascending
      const out = new Uint32Array(lists.reduce((n, l) => n + l.length, 0));
      let n = 0;
      holders.forEach((k, h) => {
        const pairs = lists[h];
        const position = this.positions[k];
        for (let i = 0; i < pairs.length; i += 2) {
          const at = position[pairs[i]];
          if (at < 0) continue;
          out[n++] = at;
          out[n++] = pairs[i + 1];
        }
      });
      perField.push(out.subarray(0, n));
      any ||= n > 0;
    }
    for (const k of holders) this.cursors[k]++;
    if (any) this.writer.term(term, perField);
  }
}
