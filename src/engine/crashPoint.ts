/**
 * `SVC_CRASH_AT=<point>` kills the process with SIGKILL when it reaches that named point: crash
 * tests use it to stop a reindex exactly mid-rebuild, mid-replay or mid-promotion.
 */
const wanted = process.env.SVC_CRASH_AT;

export function crashPoint(name: string): void {
  if (wanted === name) process.kill(process.pid, 'SIGKILL');
}
