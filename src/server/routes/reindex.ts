import { ReindexCreate, ReindexJob, ReindexPath } from '../../api/reindex.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Operations'];

export const reindexRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/reindex/jobs', { schema: { tags, body: ReindexCreate, response: { 202: ReindexJob, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req, reply) =>
    reply.status(202).send(await engine.reindex.start(caller(req), req.body)),
  );
  r.get('/v1/admin/reindex/jobs/:job_id', { schema: { tags, params: ReindexPath, response: { 200: ReindexJob, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.reindex.get(caller(req), req.params.job_id),
  );
  r.post('/v1/admin/reindex/jobs/:job_id/cancel', { schema: { tags, params: ReindexPath, response: { 200: ReindexJob, ...errors(400, 401, 403, 404, 409) } } }, async (req) =>
    engine.reindex.cancel(caller(req), req.params.job_id),
  );
};
