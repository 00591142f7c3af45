/**
 * What searches keep for their cursors (handles, rankings, SQL rows) lives here and nowhere else:
 * in memory, bounded by count and bytes, each entry for `ttlMs` at most. The least recently used
 * entry goes first when a bound is reached, so a burst of searches can never grow memory or disk.
 */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number; expires: number }>();
  private bytes = 0;

  constructor(private readonly bounds: { entries: number; bytes: number; ttlMs: number }) {}

  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.bounds.bytes) return; // larger than the whole cache: never kept
    this.entries.set(key, { value, bytes, expires: Date.now() + this.bounds.ttlMs });
    this.bytes += bytes;
    for (const [oldest] of this.entries) {
      if (this.entries.size <= this.bounds.entries && this.bytes <= this.bounds.bytes) break;
      this.delete(oldest);
    }
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expires < Date.now()) {
      this.bytes -= entry.bytes;
      return undefined;
    }
    this.entries.set(key, entry); // most recently used last
    return entry.value;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}
