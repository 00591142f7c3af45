import type { FastifyInstance } from 'fastify';

const SECRET_PARAM = /([?&](?:[^=&]*(?:token|sig|signature|secret|key)[^=&]*)=)[^&]*/gi;

/** One JSON line per request; query values that may hold credentials are redacted, headers never logged. */
export function requestLogger(app: FastifyInstance, write: (line: string) => void): void {
  app.addHook('onResponse', async (req, reply) => {
    write(
      JSON.stringify({
        time: new Date().toISOString(),
        method: req.method,
        url: req.url.replace(SECRET_PARAM, '$1REDACTED'),
        route: req.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        tenant: req.caller?.tenant_id ?? null,
        user: req.principal?.user_id ?? null,
      }),
    );
  });
}
