/** Typed engine errors; each door maps them to its own shape (HTTP status, exit code). */
export type Loc = (string | number)[];

export class EngineError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = new.target.name;
  }
}
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
/** A request the engine cannot act on; `issues` locate each problem like HTTPValidationError. */
export class Invalid extends EngineError {
  constructor(
    message: string,
    readonly issues: { loc: Loc; msg: string; type: string; input?: unknown }[] = [{ loc: [], msg: message, type: 'value_error' }],
    code?: string,
  ) {
    super(message, code);
  }
}
/** A refusal that carries a structured `{code, message}` detail rather than field locations. */
export class Refused extends EngineError {
  constructor(message: string, code: string, readonly status: 400 | 409 | 413 | 422 = 422) {
    super(message, code);
  }
}
