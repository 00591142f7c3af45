import { View, ViewCreate, ViewList, ViewListQuery, ViewPath, ViewRecords, ViewRecordsQuery } from '../../api/views.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Views'];

export const viewRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/views', { schema: { tags, body: ViewCreate, response: { 201: View, ...errors(400, 401, 403, 404, 422, 503, 507) } } }, async (req, reply) =>
    reply.status(201).send(await engine.views.create(caller(req), req.body)),
  );
  r.get('/v1/views', { schema: { tags, querystring: ViewListQuery, response: { 200: ViewList, ...errors(400, 401, 403, 422) } } }, async (req) =>
    engine.views.list(caller(req), req.query),
  );
  r.get('/v1/views/:view_id', { schema: { tags, params: ViewPath, response: { 200: View, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.views.get(caller(req), req.params.view_id),
  );
  r.delete('/v1/views/:view_id', { schema: { tags, params: ViewPath, response: { 200: View, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.views.remove(caller(req), req.params.view_id),
  );
  r.get('/v1/views/:view_id/records', { schema: { tags, params: ViewPath, querystring: ViewRecordsQuery, response: { 200: ViewRecords, ...errors(400, 401, 403, 404, 422, 503) } } }, async (req) =>
    engine.views.records(caller(req), req.params.view_id, req.query),
  );
};
