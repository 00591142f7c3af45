import type { FastifyRequest } from 'fastify';
import { LIMITS } from '../api/limits.js';
import type { Caller, Principal } from '../engine/auth/caller.js';
import { BadRequest, Forbidden, Unauthenticated } from '../engine/errors.js';
import type { Engine } from '../engine/index.js';
import { CSRF_HEADER, cookieToken } from './console/cookie.js';
import { POLICY, policyKey } from './policy.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    caller: Caller | null;
  }
}

export const TENANT_HEADER = 'x-service-tenant-id';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The token of an `Authorization: Bearer …` header, if it is one. */
export const bearerToken = (header: string | undefined): string | undefined => /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];

/** Authorization and the tenant header → Caller, checked in the spec's order: 401, then 400, then 403. */
export function authenticate(engine: Engine) {
  return async (req: FastifyRequest) => {
    if (!req.routeOptions.url) return; // no such route: the 404 handler answers
    const policy = POLICY[policyKey(req.method, req.routeOptions.url)];
    if (policy.auth === 'none') return;
    // lengths are checked before any lookup: a tenant id is part of every stored key, and LMDB keys are short
    if ((req.headers.authorization?.length ?? 0) > LIMITS.authorization) throw new Unauthenticated(`the Authorization header is longer than ${LIMITS.authorization} characters`);
    const cookieBase = engine.console.cookieName;
    const cookie = cookieToken(req, cookieBase);
    if ((cookie?.length ?? 0) > LIMITS.authorization) throw new Unauthenticated(`the ${cookieBase} cookie is longer than ${LIMITS.authorization} characters`);
    const token = bearerToken(req.headers.authorization) ?? cookie;
    if (!token) throw new Unauthenticated('Not authenticated');
    const principal = (req.principal = await engine.authenticate(token));
    if (cookie && principal.kind !== 'session') throw new Unauthenticated(`the ${cookieBase} cookie carries console sessions only`);
    // a cookie is sent by the browser whoever made the page: a change needs the header only the console's own page can set
    const checkCsrf = () => {
      if (!cookie || SAFE_METHODS.has(req.method)) return;
      const csrf = req.headers[CSRF_HEADER];
      if (typeof csrf !== 'string' || !engine.console.csrfMatches(token, csrf)) throw new Forbidden(`the ${CSRF_HEADER} header is missing or does not match the session`);
    };
    if (principal.kind === 'ingest_token') {
      if (policy.auth !== 'ingest') throw new Unauthenticated('an ingest token authenticates ingestion into its own source only');
      req.caller = engine.ingestCaller(principal, (req.params as { source_key: string }).source_key);
      return;
    }
    if (policy.auth === 'user') return checkCsrf();
    if (policy.auth === 'platform') {
      req.caller = engine.platformCaller(principal);
      return checkCsrf();
    }
    const tenant = req.headers[TENANT_HEADER];
    if (typeof tenant !== 'string' || tenant.length === 0) throw new BadRequest(`the ${TENANT_HEADER} header is required`);
    if (tenant.length > LIMITS.id) throw new BadRequest(`the ${TENANT_HEADER} header is longer than ${LIMITS.id} characters`);
    const caller = (req.caller = engine.callerIn(principal, tenant));
    checkCsrf();
    if (policy.role === 'admin' && caller.role !== 'Admin') throw new Forbidden('this operation requires the Admin role');
    if (policy.session && principal.kind !== 'session') throw new Forbidden('minting keys needs a signed-in admin console session, not an API key');
  };
}

/** The caller of a tenant or platform route (set by `authenticate`). */
export function caller(req: FastifyRequest): Caller {
  if (!req.caller) throw new Unauthenticated('Not authenticated');
  return req.caller;
}
