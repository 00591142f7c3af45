import { isDiskError } from '../engine/diskErrors.js';
import { logProblem } from '../engine/log.js';

/**
 * What `svc serve` does with an error nothing caught: it logs it (one JSON line on stderr) and
 * keeps serving. A rejection nobody awaited leaves the process sound, and a full disk is a state
 * the server reports, not a reason to exit (a supervisor would only start it again into the same
 * disk). Any other exception thrown out of a callback leaves the process in a state no one can
 * vouch for: the server then stops as it does on SIGTERM, with exit code 1.
 */
export function handleProcessErrors(stop: (exitCode: number) => void): void {
  process.on('unhandledRejection', (err) => logProblem('unhandled_rejection', err));
  process.on('uncaughtException', (err) => {
    logProblem('uncaught_exception', err);
    if (!isDiskError(err)) stop(1);
  });
}
