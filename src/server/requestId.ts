import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { newId } from '../engine/ids.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** What a proxy in front usually sends (a UUID, a ULID, nginx's hex): nothing that could forge a log line or a header. */
const SAFE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${LIMITS.requestId - 1}}$`);

/**
 * The id of a request, in its `x-request-id` response header, its log lines and a 5xx body. A
 * client's (or proxy's) own `x-request-id` is kept when it is short and plain, so that one id
 * follows the request through every hop; anything else gets a fresh `req_…` id.
 */
export function requestId(req: IncomingMessage): string {
  const sent = req.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && SAFE.test(sent) ? sent : newId('req');
}

/** Every response carries its request's id, errors included. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply) => {
    reply.header(REQUEST_ID_HEADER, req.id);
  });
}
