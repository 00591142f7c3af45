import { Job, JobList, JobListQuery, JobPath } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Operations'];

export const jobRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/v1/admin/jobs', { schema: { tags, querystring: JobListQuery, response: { 200: JobList, ...errors(400, 401, 403, 422) } } }, async (req) => ({
    jobs: engine.jobs.list(caller(req).tenant_id, req.query),
    next_cursor: null,
  }));
  r.get('/v1/admin/jobs/:job_id', { schema: { tags, params: JobPath, response: { 200: Job, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.jobs.get(caller(req).tenant_id, req.params.job_id),
  );
  r.post('/v1/admin/jobs/:job_id/cancel', { schema: { tags, params: JobPath, response: { 200: Job, ...errors(400, 401, 403, 404, 409) } } }, async (req) =>
    engine.jobs.cancel(caller(req).tenant_id, req.params.job_id),
  );
};
