/**
 * Kills the process with SIGKILL when it reaches the point `SVC_CRASH_AT` names: crash tests use it
 * to stop a reindex exactly mid-rebuild, mid-replay or mid-promotion.
 */
export function crashPoint(name: string, wanted: string | null): void {
  if (wanted === name) process.kill(process.pid, 'SIGKILL');
}
