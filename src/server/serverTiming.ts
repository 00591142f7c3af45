import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countingPhases, type Phases } from '../engine/timing.js';

declare module 'fastify' {
  interface FastifyRequest {
    phases: Phases;
    /** performance.now() at each step of the request's way through the server */
    marks: { start: number; authenticated?: number; parsed?: number; handled?: number };
  }
}

/**
 * A Server-Timing header on every answer: where its time went — auth, parse (body and validation),
 * the engine's own phases (index, records, snippets…), the rest of the handler, and serialise.
 * Must be registered before the hooks it times (rate limit, authentication).
 */
export function serverTiming(app: FastifyInstance): void {
  app.decorateRequest('phases', null as unknown as Phases);
  app.decorateRequest('marks', null as unknown as FastifyRequest['marks']);
  app.addHook('onRequest', async (req) => {
    req.phases = new Map();
    req.marks = { start: performance.now() };
  });
  app.addHook('preParsing', async (req) => {
    req.marks.authenticated = performance.now();
  });
  app.addHook('preHandler', (req, _reply, done) => {
    req.marks.parsed = performance.now();
    countingPhases(req.phases, done); // the handler runs inside: the engine's phases land in req.phases
  });
  app.addHook('preSerialization', async (req, _reply, payload) => {
    req.marks.handled = performance.now();
    return payload;
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const { start, authenticated, parsed, handled } = req.marks;
    const now = performance.now();
    const parts: [string, number][] = [];
    if (authenticated !== undefined) parts.push(['auth', authenticated - start]);
    if (parsed !== undefined && authenticated !== undefined) parts.push(['parse', parsed - authenticated]);
    if (handled !== undefined && parsed !== undefined) {
      let engine = 0;
      for (const [name, ms] of req.phases) {
        parts.push([name, ms]);
        engine += ms;
      }
      parts.push(['handler', Math.max(0, handled - parsed - engine)]);
      parts.push(['serialize', now - handled]);
    }
    parts.push(['total', now - start]);
    reply.header('server-timing', parts.map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`).join(', '));
    return payload;
  });
}
