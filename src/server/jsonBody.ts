import type { FastifyInstance } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { Invalid } from '../engine/errors.js';

/**
 * Whether `text` nests objects and arrays deeper than `max`: one pass that skips strings, so that
 * a body is refused before JSON.parse, and before any recursive walk (validation, storage) that
 * a body 10,000 levels deep would overflow.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

const tooDeep = () => {
  const msg = `JSON nested deeper than ${LIMITS.bodyDepth} levels of objects and arrays`;
  return new Invalid(msg, [{ loc: ['body'], msg, type: 'json_too_deep' }]);
};

/**
 * application/json as Fastify parses it (prototype poisoning refused, malformed JSON a 422
 * json_invalid, over `bodyLimit` a 413), with the nesting cap checked first.
 */
export function jsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string; // parseAs: 'string'
    if (nestsDeeperThan(text, LIMITS.bodyDepth)) return done(tooDeep(), undefined);
    parse(req, text, done);
  });
}
