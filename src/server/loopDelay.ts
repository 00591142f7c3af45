import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

const RESOLUTION_MS = 10;
let histogram: IntervalHistogram | null = null;

/**
 * How long the event loop was held up since the last reset: what tells whether one request's work
 * blocked the others. Measured every 10 ms for the life of the process.
 */
export function loopDelay(reset: boolean): { delay_max_ms: number; delay_p99_ms: number } {
  if (!histogram) {
    histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
  }
  // a sample is the time between two ticks: the delay is what exceeds the tick's own interval
  const ms = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);
  const out = { delay_max_ms: ms(histogram.max), delay_p99_ms: ms(histogram.percentile(99)) };
  if (reset) histogram.reset();
  return out;
}
