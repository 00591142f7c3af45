import { Type } from '@sinclair/typebox';
import { loopDelay } from '../loopDelay.js';
import { typed, type Routes } from './types.js';

export const healthRoutes: Routes = (app) => {
  loopDelay(false); // measuring starts with the server, not with the first health check
  typed(app).get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        querystring: Type.Object({ reset: Type.Optional(Type.Boolean({ description: 'start a new event-loop delay window after this answer' })) }),
        response: { 200: Type.Object({ status: Type.String(), event_loop: Type.Object({ delay_max_ms: Type.Number(), delay_p99_ms: Type.Number() }) }) },
      },
    },
    async (req) => ({ status: 'ok', event_loop: loopDelay(req.query.reset === true) }),
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
