import { setImmediate as nextTurn } from 'node:timers/promises';
import { Refused } from '../errors.js';

/** A long loop hands the event loop back this often, so one search never holds it longer. */
const SLICE_MS = 20;

export const searchTimeout = (ms: number) =>
  new Refused(`the search ran past its deadline of ${ms / 1000} s: narrow it (fewer datasets, a filter, more specific text) and run it again`, 'search_timeout', 422);

/**
 * A search's time budget. Loops over records ask `due()` per item and `await pause()` when
 * it says so: the event loop gets a turn, and a search past its deadline ends there.
 */
export class Deadline {
  /** epoch ms, shared with the text worker */
  readonly at: number;
  private sliceStart = performance.now();

  constructor(readonly ms: number) {
    this.at = Date.now() + ms;
  }

  /** The clock is read per item: one record's tests can take milliseconds (a long body). */
  due(): boolean {
    return performance.now() - this.sliceStart >= SLICE_MS;
  }

  async pause(): Promise<void> {
    this.check();
    await nextTurn();
    this.sliceStart = performance.now();
  }

  check(): void {
    if (Date.now() > this.at) throw searchTimeout(this.ms);
  }
}
