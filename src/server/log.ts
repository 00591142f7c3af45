import type { FastifyInstance } from 'fastify';
import { redactUrl } from './redact.js';

/** One JSON line per request; query values that may hold credentials are redacted, headers never logged. */
export function requestLogger(app: FastifyInstance, write: (line: string) => void): void {
  app.addHook('onResponse', async (req, reply) => {
    write(
      JSON.stringify({
        time: new Date().toISOString(),
        request_id: req.id,
        method: req.method,
        url: redactUrl(req.url),
        route: req.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        tenant: req.caller?.tenant_id ?? null,
        user: req.principal?.user_id ?? null,
      }),
    );
  });
}
