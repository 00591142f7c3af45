import { Type } from '@sinclair/typebox';
import type { Routes } from './types.js';

export const healthRoutes: Routes = (app) => {
  app.get('/healthz', { schema: { tags: ['Operations'], response: { 200: Type.Object({ status: Type.String() }) } } }, async () => ({ status: 'ok' }));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
