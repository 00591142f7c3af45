import { ApiKey, ApiKeyCreate, ApiKeyList, KeyPath, PlatformKey, PlatformKeyCreate, PlatformKeyList } from '../../api/identity.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Platform'];

export const keyRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/api-keys', { schema: { tags, body: ApiKeyCreate, response: { 201: ApiKey, ...errors(400, 401, 403, 409, 422) } } }, async (req, reply) =>
    reply.status(201).send(await engine.identity.createApiKey(caller(req), req.body)),
  );
  r.get('/v1/admin/api-keys', { schema: { tags, response: { 200: ApiKeyList, ...errors(400, 401, 403) } } }, async (req) => ({
    api_keys: engine.identity.apiKeys(caller(req)),
    next_cursor: null,
  }));
  r.delete('/v1/admin/api-keys/:id', { schema: { tags, params: KeyPath, response: { 200: ApiKey, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.identity.revokeApiKey(caller(req), req.params.id),
  );
  r.post('/v1/admin/platform-keys', { schema: { tags, body: PlatformKeyCreate, response: { 201: PlatformKey, ...errors(400, 401, 403, 409, 422, 503) } } }, async (req, reply) =>
    reply.status(201).send(await engine.identity.createPlatformKey(caller(req), req.body)),
  );
  r.get('/v1/admin/platform-keys', { schema: { tags, response: { 200: PlatformKeyList, ...errors(400, 401, 403) } } }, async (req) => ({
    platform_keys: engine.identity.platformKeys(caller(req)),
    next_cursor: null,
  }));
  r.delete('/v1/admin/platform-keys/:id', { schema: { tags, params: KeyPath, response: { 200: PlatformKey, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.identity.revokePlatformKey(caller(req), req.params.id),
  );
};
