import { Type } from '@sinclair/typebox';
import { Endpoint, EndpointCreate, EndpointList, EndpointListQuery, EndpointPath, EndpointRun, EndpointRunQuery, EndpointUpdate, EndpointAnswer } from '../../api/endpoints.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Query Endpoints'];

export const endpointRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/query-endpoints', { schema: { tags, body: EndpointCreate, response: { 201: Endpoint, ...errors(400, 401, 403, 409, 422, 507) } } }, async (req, reply) =>
    reply.status(201).send(await engine.endpoints.create(caller(req), req.body)),
  );
  r.get('/v1/admin/query-endpoints', { schema: { tags, querystring: EndpointListQuery, response: { 200: EndpointList, ...errors(400, 401, 403, 422) } } }, async (req) => engine.endpoints.list(caller(req), req.query));
  r.get('/v1/admin/query-endpoints/:name', { schema: { tags, params: EndpointPath, response: { 200: Endpoint, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.endpoints.get(caller(req), req.params.name),
  );
  r.put('/v1/admin/query-endpoints/:name', { schema: { tags, params: EndpointPath, body: EndpointUpdate, response: { 200: Endpoint, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.endpoints.update(caller(req), req.params.name, req.body),
  );
  r.delete('/v1/admin/query-endpoints/:name', { schema: { tags, params: EndpointPath, response: { 200: Endpoint, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.endpoints.remove(caller(req), req.params.name),
  );
  r.get('/v1/query-endpoints/openapi.json', { schema: { tags, response: { 200: Type.Object({}, { additionalProperties: true }), ...errors(400, 401, 403) } } }, async (req) =>
    engine.endpoints.openapi(caller(req)),
  );
  r.get('/v1/query-endpoints/:name', { schema: { tags, params: EndpointPath, querystring: EndpointRunQuery, response: { 200: EndpointAnswer, ...errors(400, 401, 403, 404, 422, 503) } } }, async (req) =>
    engine.endpoints.run(caller(req), req.params.name, req.query, 'query'),
  );
  r.post('/v1/query-endpoints/:name', { schema: { tags, params: EndpointPath, body: EndpointRun, response: { 200: EndpointAnswer, ...errors(400, 401, 403, 404, 422, 503) } } }, async (req) =>
    engine.endpoints.run(caller(req), req.params.name, req.body.params ?? {}, 'body'),
  );
};
