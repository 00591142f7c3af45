import { EngineError, Refused } from '../errors.js';
import { notAllowed } from './guard.js';
import type { SqlLimits } from './limits.js';

/** DuckDB's error classes that mean the statement itself is wrong (a name, a type, a value). */
const STATEMENT_ERROR = /^(Binder|Catalog|Conversion|Invalid Input|Out of Range|Not implemented|Invalid Type|Type Mismatch|Parameter Not Resolved|Parameter Not Allowed|Dependency|Constraint|Sequence|Syntax|Invalid) Error/i;

/**
 * A failed statement as an engine error: too slow or too big is a 422 with its own code (the
 * statement is valid but exceeds a limit), a wrong statement is a 400 with DuckDB's message, and
 * anything touching what the database refuses (files, settings, writes) is `sql_not_allowed`.
 */
export function sqlError(err: unknown, limits: SqlLimits, timedOut: boolean): Error {
  if (err instanceof EngineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (timedOut || message.startsWith('INTERRUPT Error')) {
    return new Refused(`the statement ran past the ${limits.timeoutMs / 1000} s limit and was stopped`, 'sql_timeout', 422);
  }
  if (message.startsWith('Out of Memory Error')) {
    return new Refused(`the statement needs more than the ${limits.memoryLimit} memory limit: ${message}`, 'sql_memory_limit', 422);
  }
  if (message.startsWith('Parser Error')) return new Refused(message, 'sql_syntax_error', 400);
  if (/^(Permission|TransactionContext) Error/.test(message)) return notAllowed(message);
  if (STATEMENT_ERROR.test(message)) return new Refused(message, 'sql_error', 400);
  return err instanceof Error ? err : new Error(message);
}
