import type { FastifyRequest } from 'fastify';
import { bearerToken } from '../auth.js';

/** The cookie that carries a web console session (HttpOnly, SameSite=Strict). */
export const SESSION_COOKIE = 'svc_session';
/** The header every state-changing call of the console carries: the session's CSRF token. */
export const CSRF_HEADER = 'x-csrf-token';

/** The console session cookie's token, when the request carries no Authorization header. */
export const cookieToken = (req: FastifyRequest): string | undefined => (req.headers.authorization ? undefined : req.cookies?.[SESSION_COOKIE] || undefined);

/** The token a request presents: its bearer token, else its console session cookie. */
export const sessionToken = (req: FastifyRequest): string | undefined => bearerToken(req.headers.authorization) ?? cookieToken(req);
