import type { FastifyRequest } from 'fastify';
import { redactUrl } from './redact.js';

export type LogSink = (line: string) => void;

export const stderrSink: LogSink = (line) => process.stderr.write(`${line}\n`);

/**
 * A 5xx as one JSON line with what it takes to find its cause: the request id the client saw in
 * `x-request-id` (and, for an unexpected error, in the body), the route and the stack.
 */
export function logFailure(sink: LogSink, req: FastifyRequest, status: number, err: Error): void {
  sink(
    JSON.stringify({
      time: new Date().toISOString(),
      level: 'error',
      request_id: req.id,
      method: req.method,
      url: redactUrl(req.url),
      route: req.routeOptions.url ?? null,
      status,
      error: err.message,
      code: (err as { code?: unknown }).code ?? null,
      stack: err.stack ?? null,
    }),
  );
}
