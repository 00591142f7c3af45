import { AsyncLocalStorage } from 'node:async_hooks';

/** Milliseconds spent per phase of the work a caller asked for: the server answers them as Server-Timing. */
export type Phases = Map<string, number>;

const current = new AsyncLocalStorage<Phases>();

/** Runs `work` with its phases counted into `phases`. */
export const countingPhases = <T>(phases: Phases, work: () => T): T => current.run(phases, work);

/** Adds `ms` to phase `name` of the work under way, if anyone counts. */
export function spent(name: string, ms: number): void {
  const phases = current.getStore();
  if (phases) phases.set(name, (phases.get(name) ?? 0) + ms);
}

/** `work`'s time, added to phase `name`. */
export async function timed<T>(name: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    spent(name, performance.now() - started);
  }
}
