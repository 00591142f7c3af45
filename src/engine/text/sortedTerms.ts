/**
 * A segment's terms: one string of every term in sorted order and where each starts. One string
 * instead of one per term keeps a dictionary of millions of terms (a log's ids) small in the heap.
 */
export class SortedTerms {
  constructor(private readonly text: string, private readonly starts: Uint32Array) {}

  get size(): number {
    return this.starts.length - 1;
  }

  at(i: number): string {
    return this.text.slice(this.starts[i], this.starts[i + 1]);
  }

  /** The first position whose term is ≥ `term`. */
  lowerBound(term: string): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid) < term) lo = mid + 1;
      else hi = mid;
    }
    return lo;
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
    const { text, starts } = this;
    const found = new Map<string, number>();
    const m = query.length;
    const rows: Int32Array[] = [Int32Array.from({ length: m + 1 }, (_, j) => j)]; // rows[k]: after k letters of the term
    let valid = 1; // rows[0..valid) hold the prefix of the term before
    let prevAt = 0;
    let prevLength = 0;
    let i = 0;
    while (i < this.size) {
      const at = starts[i];
      const length = starts[i + 1] - at;
      let shared = 0;
      while (shared < prevLength && shared < length && text.charCodeAt(prevAt + shared) === text.charCodeAt(at + shared)) shared++;
      valid = Math.min(valid, shared + 1);
      let skipTo = -1;
      for (let k = valid - 1; k < length; k++) {
        const above = rows[k];
        const row = (rows[k + 1] ??= new Int32Array(m + 1));
        // only cells within `max` of the diagonal can end within `max`: the rest count as max + 1
        const from = Math.max(1, k + 1 - max);
        const to = Math.min(m, k + 1 + max);
        row[0] = k + 1;
        if (from > 1) row[from - 1] = max + 1;
        let least = from === 1 ? row[0] : max + 1;
        const letter = text.charCodeAt(at + k);
        for (let j = from; j <= to; j++) {
          const up = j <= k + max ? above[j] : max + 1;
          const v = Math.min(up + 1, row[j - 1] + 1, above[j - 1] + (query.charCodeAt(j - 1) === letter ? 0 : 1), max + 1);
          row[j] = v;
          if (v < least) least = v;
        }
        if (to < m) row[to + 1] = max + 1;
        valid = k + 2;
        if (least > max) {
          skipTo = this.pastPrefix(i, k + 1);
          break;
        }
      }
      prevAt = at;
      prevLength = length;
      if (skipTo >= 0) {
        i = skipTo;
        continue;
      }
      if (Math.abs(length - m) <= max && rows[length][m] <= max) found.set(this.at(i), rows[length][m]);
      i++;
    }
    return found;
  }

  /** The first position after `i` whose term does not begin with the first `n` letters of term `i`. */
  private pastPrefix(i: number, n: number): number {
    const { text, starts } = this;
    const at = starts[i];
    const begins = (j: number) => {
      if (starts[j + 1] - starts[j] < n) return false;
      for (let c = 0; c < n; c++) if (text.charCodeAt(starts[j] + c) !== text.charCodeAt(at + c)) return false;
      return true;
    };
    let lo = i + 1;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (begins(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
