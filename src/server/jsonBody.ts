import type { FastifyInstance } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { Invalid } from '../engine/errors.js';
import { nestsDeeperThan } from '../engine/ingest/depth.js';

/** The length of each parsed body's text: validation chooses how thorough to be by it. */
export const BODY_LENGTH = new WeakMap<object, number>();

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
    parse(req, text, (err, value) => {
      if (value !== null && typeof value === 'object') BODY_LENGTH.set(value, text.length);
      done(err, value);
    });
  });
}
