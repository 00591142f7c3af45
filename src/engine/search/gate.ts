import { searchTimeout, type Deadline } from './deadline.js';

/**
 * At most `size` searches work at once; the others wait their turn, first come first served, until
 * their deadline. Each working search hands the event loop back every slice, but a loop turn runs
 * every waiting continuation: fifty searches at once would hold it for fifty slices.
 */
export class Gate {
  private working = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async enter(deadline: Deadline): Promise<() => void> {
    if (this.working < this.size) {
      this.working++;
      return () => this.leave();
    }
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      // a work without a deadline (a cancellable job) waits as long as it takes
      const timer = Number.isFinite(deadline.at)
        ? setTimeout(() => {
            this.queue.splice(this.queue.indexOf(turn), 1);
            reject(searchTimeout(deadline.ms));
          }, Math.max(0, deadline.at - Date.now()))
        : undefined;
      this.queue.push(turn);
    });
    return () => this.leave(); // the place was handed over by the search that left
  }

  private leave(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.working--;
  }
}
