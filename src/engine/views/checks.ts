import type { ViewCreate } from '../../api/views.js';
import { Invalid } from '../errors.js';

const ONE_SOURCE = 'give exactly one of from_search_id and search_request';

/** What the schema cannot say of a view to create: one source, and an expiry still ahead. */
export function checkCreate(req: ViewCreate, nowMs = Date.now()): void {
  const given = (['from_search_id', 'search_request'] as const).filter((k) => req[k] !== undefined && req[k] !== null);
  if (given.length === 2) {
    throw new Invalid(`${ONE_SOURCE}, not both`, given.map((k) => ({ loc: ['body', k], msg: `${ONE_SOURCE}, not both`, type: 'value_error' })));
  }
  if (given.length === 0) {
    throw new Invalid(ONE_SOURCE, ['from_search_id', 'search_request'].map((k) => ({ loc: ['body', k], msg: `Field required: ${ONE_SOURCE}`, type: 'missing' })));
  }
  if (req.expires_at && Date.parse(req.expires_at) <= nowMs) {
    const msg = 'expires_at is in the past: a view must expire later than it is made';
    throw new Invalid(msg, [{ loc: ['body', 'expires_at'], msg, type: 'value_error', input: req.expires_at }]);
  }
}

/** A view answers (is not building, being removed or expired). */
export const answers = (v: { status: string; expires_at: string | null }, nowMs = Date.now()) =>
  v.status === 'ready' && !expired(v, nowMs);

export const expired = (v: { expires_at: string | null }, nowMs: number) => v.expires_at !== null && Date.parse(v.expires_at) <= nowMs;
