import { Detection, DetectionCreate, DetectionList, DetectionListQuery, DetectionPath, DetectionTest, DetectionTestResult, HitList, HitListQuery } from '../../api/detections.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Detections'];

export const detectionRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/detections', { schema: { tags, body: DetectionCreate, response: { 201: Detection, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req, reply) =>
    reply.status(201).send(await engine.detections.create(caller(req), req.body)),
  );
  r.get('/v1/admin/detections', { schema: { tags, querystring: DetectionListQuery, response: { 200: DetectionList, ...errors(400, 401, 403, 422) } } }, async (req) =>
    engine.detections.list(caller(req), req.query),
  );
  r.get('/v1/admin/detections/:id', { schema: { tags, params: DetectionPath, response: { 200: Detection, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.detections.get(caller(req), req.params.id),
  );
  r.put('/v1/admin/detections/:id', { schema: { tags, params: DetectionPath, body: DetectionCreate, response: { 200: Detection, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.detections.update(caller(req), req.params.id, req.body),
  );
  r.delete('/v1/admin/detections/:id', { schema: { tags, params: DetectionPath, response: { 200: Detection, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.detections.remove(caller(req), req.params.id),
  );
  r.post('/v1/admin/detections/:id/test', { schema: { tags, params: DetectionPath, body: DetectionTest, response: { 200: DetectionTestResult, ...errors(400, 401, 403, 404, 422, 503) } } }, async (req) =>
    engine.detections.test(caller(req), req.params.id, req.body ?? {}),
  );
  r.get('/v1/detections/:id/hits', { schema: { tags, params: DetectionPath, querystring: HitListQuery, response: { 200: HitList, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.detections.hits(caller(req), req.params.id, req.query),
  );
};
