import { BackfillCreate, BackfillJob, BackfillPath } from '../../api/semantic.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Operations'];

export const semanticRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/semantic/filters/backfill', { schema: { tags, body: BackfillCreate, response: { 202: BackfillJob, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req, reply) =>
    reply.status(202).send(await engine.semantic.backfill.start(caller(req), req.body)),
  );
  r.get('/v1/admin/semantic/filters/backfill/:job_id', { schema: { tags, params: BackfillPath, response: { 200: BackfillJob, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.semantic.backfill.get(caller(req), req.params.job_id),
  );
};
