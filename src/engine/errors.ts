/**
 * Typed engine errors, and the one table every door derives its answer from: the HTTP status the
 * server sends, the exit code the CLI ends with, and the class the remote client turns a status
 * back into. Both CLI modes then fail alike, whichever door an error went through.
 */
import { Invalid, ServiceError, type Issue } from '../api/errors.js';

export { Invalid, type Issue };
export type { Loc } from '../api/errors.js';

/** The base of the engine's typed errors (declared with the API schemas, which must not import the engine). */
export const EngineError = ServiceError;
export type EngineError = ServiceError;
export class NotFound extends EngineError {}
export class Conflict extends EngineError {}
export class Forbidden extends EngineError {}
export class Unauthenticated extends EngineError {}
export class Unavailable extends EngineError {}
/** A write refused because the disk (or LMDB's map) is full: repairable once space is freed. */
export class DiskFull extends EngineError {
  constructor(message = 'the disk is full: free some space and retry') {
    super(message, 'disk_full');
  }
}
/** A request missing something it must carry, such as the tenant header. */
export class BadRequest extends EngineError {}
/** A refusal that carries a structured `{code, message}` detail rather than field locations. */
export class Refused extends EngineError {
  constructor(message: string, code: string, readonly status: 400 | 409 | 413 | 422 = 422) {
    super(message, code);
  }
}

/**
 * `svc`'s exit codes (README "Exit codes"; scripts branch on them, so a number never changes
 * meaning). `runFailed` is the CLI's own: a `--wait` that saw its run or job end `failed`.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2, notFound: 3, auth: 4, runFailed: 5, diskFull: 6 } as const;

interface ErrorKind {
  kind: string;
  /** the class this kind is; a Refused is matched by its own status instead */
  type: abstract new (...args: never[]) => EngineError;
  status: number;
  exit: number;
  /** further statuses the remote client reads as this kind */
  alsoFrom?: number[];
  /** the error a response of this kind becomes again on the client's side */
  make: (message: string, code?: string, issues?: Issue[]) => EngineError;
}

/**
 * One row per kind. Bad input (400, 413, 422) exits 2 whether it was refused by the server or
 * locally; a conflict is a failure (1) as any other. Internal stays last: it catches the rest.
 */
export const ERROR_KINDS: readonly ErrorKind[] = [
  { kind: 'bad_request', type: BadRequest, status: 400, exit: EXIT.usage, make: (m, c) => new BadRequest(m, c) },
  { kind: 'unauthenticated', type: Unauthenticated, status: 401, exit: EXIT.auth, make: (m, c) => new Unauthenticated(m, c) },
  { kind: 'forbidden', type: Forbidden, status: 403, exit: EXIT.auth, make: (m, c) => new Forbidden(m, c) },
  { kind: 'not_found', type: NotFound, status: 404, exit: EXIT.notFound, make: (m, c) => new NotFound(m, c) },
  { kind: 'conflict', type: Conflict, status: 409, exit: EXIT.failure, make: (m, c) => new Conflict(m, c) },
  // only Refused says 413 (a part, an object, a body over its limit); the framework's own 413 has no code
  { kind: 'too_large', type: Refused, status: 413, exit: EXIT.usage, make: (m, c) => new Refused(m, c ?? 'too_large', 413) },
  { kind: 'invalid', type: Invalid, status: 422, exit: EXIT.usage, make: (m, c, issues) => new Invalid(m, issues, c) },
  // 429 and a gateway's 502/504 say the same as 503: not now, try again
  { kind: 'unavailable', type: Unavailable, status: 503, exit: EXIT.failure, alsoFrom: [429, 502, 504], make: (m, c) => new Unavailable(m, c) },
  { kind: 'disk_full', type: DiskFull, status: 507, exit: EXIT.diskFull, make: (m) => new DiskFull(m) },
  { kind: 'internal', type: EngineError, status: 500, exit: EXIT.failure, make: (m, c) => new EngineError(m, c) },
];

const INTERNAL = ERROR_KINDS[ERROR_KINDS.length - 1];
const BAD_REQUEST = ERROR_KINDS[0];

/** The row an error belongs to; anything that is not an engine error is internal. */
export function kindOf(err: unknown): ErrorKind {
  if (err instanceof Refused) return ERROR_KINDS.find((k) => k.status === err.status) ?? INTERNAL;
  return ERROR_KINDS.find((k) => k.type !== Refused && err instanceof k.type) ?? INTERNAL;
}

export const httpStatusOf = (err: unknown): number => kindOf(err).status;

export const exitCodeOf = (err: unknown): number => kindOf(err).exit;

/**
 * An error response turned back into the engine error it came from. A 4xx the table does not name
 * (414, 415, 431…) is still a request the server would not take as sent: bad input, not a crash.
 */
export function errorFromStatus(status: number, message: string, code?: string, issues?: Issue[]): EngineError {
  const kind = ERROR_KINDS.find((k) => k.status === status || k.alsoFrom?.includes(status)) ?? (status >= 400 && status < 500 ? BAD_REQUEST : INTERNAL);
  return kind.make(message, code, issues);
}
