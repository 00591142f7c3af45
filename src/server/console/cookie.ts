import type { FastifyRequest } from 'fastify';

/** The header every state-changing call of the console carries: the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

/** The session cookie's name as set: `__Host-` prefixed when it is Secure, so no other host or path can plant one. */
export const cookieName = (base: string, secure: boolean) => (secure ? `__Host-${base}` : base);

/** The console session cookie's token, when the request carries no Authorization header. */
export const cookieToken = (req: FastifyRequest, base: string): string | undefined =>
  req.headers.authorization ? undefined : req.cookies?.[cookieName(base, true)] || req.cookies?.[base] || undefined;
