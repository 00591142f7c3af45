import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ConsoleSession, ConsoleSignIn } from '../../api/console.js';
import { Forbidden, Unauthenticated } from '../../engine/errors.js';
import { consoleFiles } from '../console/files.js';
import { bearerToken } from '../auth.js';
import { cookieName, cookieToken } from '../console/cookie.js';
import { errors, typed, type Routes } from './types.js';

const tags = ['Identity']; // the spec's group for sign-in and sessions

// the page runs only its own scripts and styles, talks only to this server, and is never framed
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function sendFile(req: FastifyRequest, reply: FastifyReply, name: string) {
  const file = consoleFiles().get(name);
  if (!file) return reply.status(404).send({ detail: name === 'index.html' ? 'the web console is not built: run `npm run build`' : 'Not Found' });
  const gzip = file.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '') ? file.gzip : null;
  const etag = gzip ? file.etag.replace(/"$/, '-gz"') : file.etag; // each encoding its own tag: a cache must not swap them
  reply.header('cache-control', 'no-cache').header('etag', etag).header('x-content-type-options', 'nosniff').header('vary', 'accept-encoding');
  if (name.endsWith('.html')) reply.header('content-security-policy', CSP).header('referrer-policy', 'no-referrer');
  const known = (req.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (known.includes(etag)) return reply.status(304).send();
  reply.type(file.type);
  return gzip ? reply.header('content-encoding', 'gzip').send(gzip) : reply.send(file.body);
}

/** The web console: its page and files, and its sessions (a sign-in link exchanged for a cookie). */
export const consoleRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/', { schema: { hide: true } }, (req, reply) => sendFile(req, reply, 'index.html'));
  r.get('/console/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 128 }) }) } }, (req, reply) => sendFile(req, reply, req.params.file));

  r.post('/v1/console/session', { schema: { tags, body: ConsoleSignIn, response: { 200: ConsoleSession, ...errors(401, 422) } } }, async (req, reply) => {
    const { token, session } = await engine.console.exchange(req.body.code);
    // a browser signed in before gets the new session in place of the old one, which ends
    const before = cookieToken(req, engine.console.cookieName);
    if (before) await engine.console.end(before).catch(() => {}); // an invalid or ended one has nothing to end
    const secure = req.protocol === 'https' || app.publicUrl?.startsWith('https:') === true;
    reply.setCookie(cookieName(engine.console.cookieName, secure), token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: new Date(session.expires_at) });
    return session;
  });
  r.get('/v1/console/session', { schema: { tags, response: { 200: ConsoleSession, ...errors(401, 403) } } }, async (req) => engine.console.current(presented(req, engine.console.cookieName)));
  r.delete('/v1/console/session', { schema: { tags, response: { 204: Type.Null(), ...errors(401, 403) } } }, async (req, reply) => {
    await engine.console.end(presented(req, engine.console.cookieName));
    for (const secure of [false, true]) reply.clearCookie(cookieName(engine.console.cookieName, secure), { path: '/', secure });
    return reply.status(204).send(null);
  });
};

/** The session token the request was authenticated with (cookie or bearer). */
function presented(req: FastifyRequest, cookieBase: string): string {
  const token = bearerToken(req.headers.authorization) ?? cookieToken(req, cookieBase);
  if (!token) throw new Unauthenticated('Not authenticated');
  if (req.principal?.kind !== 'session') throw new Forbidden('this is a console session route: an API key has no session');
  return token;
}
