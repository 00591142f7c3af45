import { partitionPoint } from './partitionPoint.js';
import { TERM_BLOCK } from './segmentFile.js';

/**
 * A sealed segment's terms in sorted order, read a block at a time: only each block's first term
 * stays in memory, so a dictionary of millions of terms (a log's ids) costs little heap.
 */
export class SortedTerms {
  constructor(
    readonly size: number,
    private readonly firsts: string[],
    private readonly block: (b: number, cached?: boolean) => { terms: string[] },
  ) {}

  /** `cached` false: a merge reads every block once, and would only push the searches' blocks out. */
  at(i: number, cached = true): string {
    return this.block(Math.floor(i / TERM_BLOCK), cached).terms[i % TERM_BLOCK];
  }

  /** The first position whose term is ≥ `term`. */
  lowerBound(term: string): number {
    // the last block whose first term is ≤ `term`: the position is in it, or is the next block's first
    const b = partitionPoint(0, this.firsts.length, (k) => this.firsts[k] <= term) - 1;
    if (b < 0) return 0;
    const terms = this.block(b).terms;
    return b * TERM_BLOCK + partitionPoint(0, terms.length, (k) => terms[k] < term);
  }

  indexOf(term: string): number {
    const i = this.lowerBound(term);
    return i < this.size && this.at(i) === term ? i : -1;
  }

  /** Terms that start with `prefix`. */
  *withPrefix(prefix: string): Generator<string> {
    for (let i = this.lowerBound(prefix); i < this.size; i++) {
      const term = this.at(i);
      if (!term.startsWith(prefix)) return;
      yield term;
    }
  }

  /**
   * Terms within Levenshtein distance `max` of `query`, with their distance. The sorted order is a
   * trie walked depth first: rows of the distance table are kept for the prefix a term shares with
   * the one before, and a prefix that can no longer come within `max` skips every term under it.
   */
  fuzzy(query: string, max: number): Map<string, number> {
    const found = new Map<string, number>();
    const m = query.length;
    const rows: Int32Array[] = [Int32Array.from({ length: m + 1 }, (_, j) => j)]; // rows[k]: after k letters of the term
    let valid = 1; // rows[0..valid) hold the prefix of the term before
    let prev = '';
    let i = 0;
    while (i < this.size) {
      const term = this.at(i);
      let shared = 0;
      while (shared < prev.length && shared < term.length && prev.charCodeAt(shared) === term.charCodeAt(shared)) shared++;
      valid = Math.min(valid, shared + 1);
      let skipTo = -1;
      for (let k = valid - 1; k < term.length; k++) {
        const above = rows[k];
        const row = (rows[k + 1] ??= new Int32Array(m + 1));
        // only cells within `max` of the diagonal can end within `max`: the rest count as max + 1
        const from = Math.max(1, k + 1 - max);
        const to = Math.min(m, k + 1 + max);
        row[0] = k + 1;
        if (from > 1) row[from - 1] = max + 1;
        let least = from === 1 ? row[0] : max + 1;
        const letter = term.charCodeAt(k);
        for (let j = from; j <= to; j++) {
          const up = j <= k + max ? above[j] : max + 1;
          const v = Math.min(up + 1, row[j - 1] + 1, above[j - 1] + (query.charCodeAt(j - 1) === letter ? 0 : 1), max + 1);
          row[j] = v;
          if (v < least) least = v;
        }
        if (to < m) row[to + 1] = max + 1;
        valid = k + 2;
        if (least > max) {
          skipTo = this.pastPrefix(i, term.slice(0, k + 1));
          break;
        }
      }
      prev = term;
      if (skipTo >= 0) {
        i = skipTo;
        continue;
      }
      if (Math.abs(term.length - m) <= max && rows[term.length][m] <= max) found.set(term, rows[term.length][m]);
      i++;
    }
    return found;
  }

  /** The first position after `i` whose term does not begin with `prefix` (which term `i` begins with). */
  private pastPrefix(i: number, prefix: string): number {
    // the last block whose first term begins with `prefix` (or i's own) holds the end: one block read
    const own = Math.floor(i / TERM_BLOCK);
    const b = partitionPoint(own + 1, this.firsts.length, (k) => this.firsts[k].startsWith(prefix)) - 1;
    const terms = this.block(b).terms;
    return b * TERM_BLOCK + partitionPoint(b === own ? (i % TERM_BLOCK) + 1 : 0, terms.length, (k) => terms[k].startsWith(prefix));
  }
}
