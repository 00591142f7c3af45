import { EXIT } from '../engine/errors.js';

/**
 * `svc … | head -1`: once the reader has gone, what is left to print has nobody to read it. The
 * command ends as if it had printed everything (exit 0, nothing on stderr), and paging stops.
 */
let closed = false;

export const stdoutClosed = (): boolean => closed;

/** Installed once, before any command writes: without a listener a closed pipe is an uncaught EPIPE. */
export function watchStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (!closed && err.code !== 'EPIPE') {
      process.stderr.write(`svc: cannot write the output: ${err.message}\n`);
      process.exitCode = EXIT.failure;
    }
    closed = true;
  });
  // a closed stderr is no reason to fail a command whose output went through
  process.stderr.on('error', () => {});
}

/**
 * Resolves once stdout can take more, or has closed: a write to a closed pipe reports so a few ticks
 * later, so this first lets that report arrive. Paging waits here before it fetches the next page.
 */
export async function drained(out: NodeJS.WriteStream = process.stdout): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  if (closed || !out.writableNeedDrain) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      for (const e of ['drain', 'close', 'error']) out.off(e, done);
      resolve();
    };
    for (const e of ['drain', 'close', 'error']) out.on(e, done);
  });
}
