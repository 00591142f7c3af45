import type { FastifyRequest } from 'fastify';
import type { Engine } from '../engine/index.js';
import type { Caller, Principal } from '../engine/auth/caller.js';
import { BadRequest, Unauthenticated } from '../engine/errors.js';

/** What a route needs of its caller: nothing, a signed-in user, or a user acting in a tenant (the default). */
export type AuthMode = 'none' | 'user' | 'tenant';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
  interface FastifyRequest {
    principal: Principal | null;
    caller: Caller | null;
  }
}

export const TENANT_HEADER = 'x-service-tenant-id';

/** Authorization and the tenant header → Caller, checked in the spec's order: 401, then 400, then 403. */
export function authenticate(engine: Engine) {
  return async (req: FastifyRequest) => {
    const mode = req.routeOptions.config?.auth ?? 'tenant';
    if (mode === 'none' || !req.routeOptions.url) return;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) throw new Unauthenticated('Not authenticated');
    req.principal = await engine.authenticate(match[1]);
    if (mode === 'user') return;
    const tenant = req.headers[TENANT_HEADER];
    if (typeof tenant !== 'string' || tenant.length === 0) throw new BadRequest(`the ${TENANT_HEADER} header is required`);
    req.caller = engine.callerIn(req.principal, tenant);
  };
}

/** The caller of a tenant route (set by `authenticate`). */
export function caller(req: FastifyRequest): Caller {
  if (!req.caller) throw new Unauthenticated('Not authenticated');
  return req.caller;
}
