import type { FastifyRequest } from 'fastify';
import type { Caller, Principal } from '../engine/auth/caller.js';
import { BadRequest, Forbidden, Unauthenticated } from '../engine/errors.js';
import type { Engine } from '../engine/index.js';
import { POLICY, policyKey } from './policy.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    caller: Caller | null;
  }
}

export const TENANT_HEADER = 'x-service-tenant-id';

/** Authorization and the tenant header → Caller, checked in the spec's order: 401, then 400, then 403. */
export function authenticate(engine: Engine) {
  return async (req: FastifyRequest) => {
    if (!req.routeOptions.url) return; // no such route: the 404 handler answers
    const policy = POLICY[policyKey(req.method, req.routeOptions.url)];
    if (policy.auth === 'none') return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new Unauthenticated('Not authenticated');
    const principal = (req.principal = await engine.authenticate(match[1]));
    if (principal.kind === 'ingest_token') {
      if (policy.auth !== 'ingest') throw new Unauthenticated('an ingest token authenticates ingestion into its own source only');
      req.caller = engine.ingestCaller(principal, (req.params as { source_key: string }).source_key);
      return;
    }
    if (policy.auth === 'user') return;
    if (policy.auth === 'platform') {
      req.caller = engine.platformCaller(principal);
      return;
    }
    const tenant = req.headers[TENANT_HEADER];
    if (typeof tenant !== 'string' || tenant.length === 0) throw new BadRequest(`the ${TENANT_HEADER} header is required`);
    const caller = (req.caller = engine.callerIn(principal, tenant));
    if (policy.role === 'admin' && caller.role !== 'Admin') throw new Forbidden('this operation requires the Admin role');
    if (policy.session && principal.kind !== 'session') throw new Forbidden('minting keys needs a signed-in admin console session, not an API key');
  };
}

/** The caller of a tenant or platform route (set by `authenticate`). */
export function caller(req: FastifyRequest): Caller {
  if (!req.caller) throw new Unauthenticated('Not authenticated');
  return req.caller;
}
