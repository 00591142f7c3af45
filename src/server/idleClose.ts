import type { FastifyInstance } from 'fastify';

const EVERY_MS = 50;

/**
 * Closing the server closes the keep-alive connections that are idle at that moment; one whose
 * response (a streamed download) finished a moment before still counts as busy then, and would
 * hold the close open until its keep-alive timeout. Idle connections are closed again every 50 ms
 * until the server has closed.
 */
export function closeIdleUntilClosed(app: FastifyInstance): void {
  app.addHook('preClose', (done) => {
    const timer = setInterval(() => app.server.closeIdleConnections(), EVERY_MS).unref();
    app.server.once('close', () => clearInterval(timer));
    done();
  });
}
