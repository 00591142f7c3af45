/**
 * What sealed segments read from their files (postings, term blocks), kept while it fits a byte
 * budget: the least recently used goes first. A search of common words reads them once, not on
 * every search.
 */
export class LruCache<V extends { byteLength: number }> {
  private readonly entries = new Map<string, V>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  get(key: string, read: () => V): V {
    const found = this.entries.get(key);
    if (found) {
      this.entries.delete(key); // to the back: most recently used
      this.entries.set(key, found);
      return found;
    }
    const value = read();
    if (value.byteLength > this.budget / 4) return value; // one huge value would push everything else out
    this.entries.set(key, value);
    this.bytes += value.byteLength;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.budget) break;
      this.entries.delete(k);
      this.bytes -= v.byteLength;
    }
    return value;
  }

  /** Forgets what a segment read (it was merged away or closed). */
  drop(prefix: string): void {
    for (const [k, v] of this.entries) {
      if (k.startsWith(prefix)) {
        this.entries.delete(k);
        this.bytes -= v.byteLength;
      }
    }
  }
}
