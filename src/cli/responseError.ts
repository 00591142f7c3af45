import { errorFromStatus, type EngineError } from '../engine/errors.js';

/**
 * An error response's `{detail}` turned back into the engine error it came from (through the one
 * error table), so that local and remote commands, and parts and streams, fail alike.
 */
export function responseError(status: number, body: any, prefix = ''): EngineError {
  const detail = body?.detail;
  const issues = Array.isArray(detail) ? detail : undefined;
  const message = typeof detail === 'string' ? detail : detail?.message ?? (issues ? issues.map((d: any) => `${d.loc?.join('.')}: ${d.msg}`).join('; ') : `HTTP ${status}`);
  const code = typeof detail === 'object' && !issues ? detail?.code : undefined;
  return errorFromStatus(status, prefix + message, code, issues);
}
