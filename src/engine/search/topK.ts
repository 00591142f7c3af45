/**
 * The best `k` items of a stream, in O(log k) per item and O(k) memory: a search keeps its
 * ranking this way instead of holding and sorting every match.
 */
export class TopK<T> {
  /** a heap whose root is the worst item kept */
  private readonly heap: T[] = [];

  constructor(
    private readonly k: number,
    private readonly better: (a: T, b: T) => boolean,
  ) {}

  push(item: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(item);
      this.up(h.length - 1);
    } else if (this.k > 0 && this.better(item, h[0])) {
      h[0] = item;
      this.down(0);
    }
  }

  /** The items kept, in no order. */
  unsorted(): readonly T[] {
    return this.heap;
  }

  /** Best first. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => (this.better(a, b) ? -1 : this.better(b, a) ? 1 : 0));
  }

  /**
   * Best first, like `sorted`, taken out of the heap a slice at a time (the heap is empty after):
   * sorting a million items in one go would hold the event loop for about a second.
   */
  async drain(turns: { due(): boolean; pause(): Promise<void> }): Promise<T[]> {
    const h = this.heap;
    const out = new Array<T>(h.length);
    for (let i = h.length - 1; i >= 0; i--) {
      out[i] = h[0];
      const last = h.pop()!;
      if (h.length > 0) {
        h[0] = last;
        this.down(0);
      }
      if (turns.due()) await turns.pause();
    }
    return out;
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.better(h[parent], h[i])) return;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      let worst = i;
      const left = 2 * i + 1;
      if (left < h.length && this.better(h[worst], h[left])) worst = left;
      if (left + 1 < h.length && this.better(h[worst], h[left + 1])) worst = left + 1;
      if (worst === i) return;
      [h[worst], h[i]] = [h[i], h[worst]];
      i = worst;
    }
  }
}
