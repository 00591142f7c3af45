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
    this.writer = new SegmentWriter(path, this.fieldCount);
  }

  /** Merges terms until `until` (epoch ms); answers true once the file is written. */
  step(until: number): boolean {
    for (let i = 0; ; i++) {
      if ((i & 255) === 0 && Date.now() > until) return false;
      let least: string | null = null;
      this.sources.forEach((s, k) => {
        if (this.cursors[k] < s.terms.size) {
          const term = s.terms.at(this.cursors[k]);
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
    const perField = Array.from({ length: this.fieldCount }, () => ({ docs: [] as number[], tfs: [] as number[] }));
    let any = false;
    this.sources.forEach((s, k) => {
      if (this.cursors[k] >= s.terms.size || s.terms.at(this.cursors[k]) !== term) return;
      const t = this.cursors[k]++;
      for (let f = 0; f < this.fieldCount; f++) {
        const pairs = s.postingsAt(t, f, false);
        for (let i = 0; i < pairs.length; i += 2) {
          const at = this.positions[k][pairs[i]];
          if (at < 0) continue;
          perField[f].docs.push(at);
          perField[f].tfs.push(pairs[i + 1]);
          any = true;
        }
      }
    });
    if (any) this.writer.term(term, perField);
  }
}
