import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ConsoleSession, ConsoleSignIn } from '../../api/console.js';
import { Unauthenticated } from '../../engine/errors.js';
import { consoleFiles } from '../console/files.js';
import { SESSION_COOKIE, sessionToken } from '../console/cookie.js';
import { errors, typed, type Routes } from './types.js';

const tags = ['Console'];

// the page runs only its own scripts and styles, talks only to this server, and is never framed
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function sendFile(req: FastifyRequest, reply: FastifyReply, name: string) {
  const file = consoleFiles().get(name);
  if (!file) return reply.status(404).send({ detail: name === 'index.html' ? 'the web console is not built: run `npm run build`' : 'Not Found' });
  reply.header('cache-control', 'no-cache').header('etag', file.etag).header('x-content-type-options', 'nosniff').header('vary', 'accept-encoding');
  if (name.endsWith('.html')) reply.header('content-security-policy', CSP).header('referrer-policy', 'no-referrer');
  if (req.headers['if-none-match'] === file.etag) return reply.status(304).send();
  reply.type(file.type);
  if (file.gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}

/** The web console: its page and files, and its sessions (a sign-in link exchanged for a cookie). */
export const consoleRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/', { schema: { hide: true } }, (req, reply) => sendFile(req, reply, 'index.html'));
  r.get('/console/:file', { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 128 }) }) } }, (req, reply) => sendFile(req, reply, req.params.file));

  r.post('/v1/console/session', { schema: { tags, body: ConsoleSignIn, response: { 200: ConsoleSession, ...errors(401, 422) } } }, async (req, reply) => {
    const { token, session } = await engine.console.exchange(req.body.code);
    const secure = req.protocol === 'https' || app.publicUrl?.startsWith('https:') === true;
    reply.setCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/', expires: new Date(session.expires_at) });
    return session;
  });
  r.get('/v1/console/session', { schema: { tags, response: { 200: ConsoleSession, ...errors(401) } } }, async (req) => engine.console.current(presented(req)));
  r.delete('/v1/console/session', { schema: { tags, response: { 204: Type.Null(), ...errors(401, 403) } } }, async (req, reply) => {
    await engine.console.end(presented(req));
    return reply.clearCookie(SESSION_COOKIE, { path: '/' }).status(204).send(null);
  });
};

/** The session token the request was authenticated with (cookie or bearer). */
function presented(req: FastifyRequest): string {
  const token = sessionToken(req);
  if (!token || req.principal?.kind !== 'session') throw new Unauthenticated('not a console session');
  return token;
}
