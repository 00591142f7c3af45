/**
 * The error every door shares, and the one a request that fails its schema raises. They live with
 * the schemas so that src/api stands alone (the engine imports src/api, never the reverse); the
 * engine's typed errors (src/engine/errors.ts) extend `ServiceError` and re-export `Invalid`.
 */
export type Loc = (string | number)[];
/** One problem of a request, located as HTTPValidationError's `detail` items are. */
export interface Issue { loc: Loc; msg: string; type: string; ctx?: Record<string, unknown>; input?: unknown }

export class ServiceError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** A request that cannot be acted on; `issues` locate each problem like HTTPValidationError (422). */
export class Invalid extends ServiceError {
  constructor(
    message: string,
    readonly issues: Issue[] = [{ loc: [], msg: message, type: 'value_error' }],
    code?: string,
  ) {
    super(message, code);
  }
}
