import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { newId } from '../engine/ids.js';
import { REQUEST_ID_HEADER } from './requestId.js';

/**
 * The router's refusals, made before any route (and its hooks) runs: a URL that is not valid
 * percent-encoding, a path parameter past `LIMITS.pathParam`. Same `{detail}` shape as the rest.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, req.id);
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.status(414).send({ detail: `a path parameter is longer than ${LIMITS.pathParam} characters` });
  } else if (err.code === 'FST_ERR_BAD_URL') {
    reply.status(400).send({ detail: 'the URL is not valid percent-encoding' });
  } else {
    reply.status(400).send({ detail: err.message });
  }
}

function answer(err: NodeJS.ErrnoException): [number, string] {
  if (err.code === 'HPE_HEADER_OVERFLOW') return [431, `request line and headers too large (at most ${maxHeaderSize} bytes)`];
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'request timeout'];
  return [400, 'bad request: not a valid HTTP/1.1 request'];
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (headers over Node's
 * `maxHeaderSize`, a malformed request line). Answer those too with `{detail}` JSON, then close:
 * the connection's framing can no longer be trusted.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // as Node itself does: never write into the middle of a response already under way
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (socket.writable && !inFlight) {
    const [status, detail] = answer(err);
    const body = JSON.stringify({ detail });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${newId('req')}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
