import { PlatformKey, Tenant, TenantCreate, TenantList, TenantPath } from '../../api/identity.js';
import { DataDeletionJob } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Platform'];

export const platformRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/platform/keys', { schema: { tags, response: { 201: PlatformKey, ...errors(401, 403) } } }, async (req, reply) =>
    reply.status(201).send(await engine.identity.rotatePlatformKey(caller(req))),
  );
  r.post('/v1/platform/tenants', { schema: { tags, body: TenantCreate, response: { 201: Tenant, ...errors(401, 403, 422) } } }, async (req, reply) =>
    reply.status(201).send(await engine.tenants.create(caller(req), req.body)),
  );
  r.get('/v1/platform/tenants', { schema: { tags, response: { 200: TenantList, ...errors(401, 403) } } }, async (req) => ({
    tenants: engine.tenants.list(caller(req)),
    next_cursor: null,
  }));
  r.delete('/v1/platform/tenants/:tenant_id', { schema: { tags, params: TenantPath, response: { 202: DataDeletionJob, ...errors(401, 403, 404) } } }, async (req, reply) =>
    reply.status(202).send(await engine.tenants.delete(caller(req), req.params.tenant_id)),
  );
};
