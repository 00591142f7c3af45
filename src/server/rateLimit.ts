import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Invalid } from '../engine/errors.js';
import { bearerToken } from './auth.js';

export interface RateLimit {
  /** requests one credential may make per window */
  max: number;
  windowMs: number;
}

/** `svc serve`'s limit when SVC_RATE_LIMIT is unset: 100 requests a second per credential, sustained for a minute. */
export const SERVE_RATE_LIMIT_PER_MINUTE = 6000;

/** SVC_RATE_LIMIT: requests per minute per credential; `0` or `off` turns limiting off; unset takes `fallback`. */
export function rateLimitFromEnv(value: string | undefined, fallback = SERVE_RATE_LIMIT_PER_MINUTE): RateLimit | undefined {
  const v = value?.trim().toLowerCase() || String(fallback);
  if (v === 'off' || v === '0') return undefined;
  if (!/^[1-9]\d{0,8}$/.test(v)) throw new Invalid(`SVC_RATE_LIMIT must be a number of requests per minute, 0 or off (got '${value}')`);
  return { max: Number(v), windowMs: 60_000 };
}

/**
 * Who a request counts against: its bearer token (hashed, so that no token sits in memory as a
 * key), else its client address. Checked before authentication: a flood of one credential is
 * turned away before any lookup (made-up tokens each get a bucket of their own, and a 401).
 */
function credential(req: FastifyRequest): string {
  const token = bearerToken(req.headers.authorization);
  return token ? `token:${createHash('sha256').update(token).digest('base64url')}` : `ip:${req.ip}`;
}

/** A fixed window per credential; over it, 429 with `Retry-After` and the `{detail}` shape. /healthz is never limited. */
export async function rateLimits(app: FastifyInstance, limit: RateLimit): Promise<void> {
  await app.register(rateLimit, {
    global: false, // one app-wide hook below instead of one per route, so that it runs before authentication
    max: limit.max,
    timeWindow: limit.windowMs,
    cache: 10_000,
    keyGenerator: credential,
    allowList: (req) => req.routeOptions.url === '/healthz',
    errorResponseBuilder: (_req, ctx) =>
      Object.assign(new Error(`rate limit exceeded: at most ${ctx.max} requests per ${limit.windowMs / 1000} s for one credential; retry in ${ctx.after}`), {
        statusCode: ctx.statusCode,
      }),
  });
  app.addHook('onRequest', app.rateLimit());
}
