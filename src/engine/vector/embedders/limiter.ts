import { EmbedderUnavailable } from './embedder.js';

/**
 * At most `concurrency` calls at once and at most `queue` waiting; past that a call is refused at
 * once, so a saturated provider turns into a quick "try later" instead of a pile of requests.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queue) throw new EmbedderUnavailable('the embedding queue is full');
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
