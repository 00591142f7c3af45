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

  /** Best first. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => (this.better(a, b) ? -1 : this.better(b, a) ? 1 : 0));
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
      for (const child of [2 * i + 1, 2 * i + 2]) if (child < h.length && this.better(h[worst], h[child])) worst = child;
      if (worst === i) return;
      [h[worst], h[i]] = [h[i], h[worst]];
      i = worst;
    }
  }
}
