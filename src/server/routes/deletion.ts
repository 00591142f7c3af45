import { DataDeletionJob, JobPath, ObjectDeletionQuery, RecordPath, UploadSessionPath } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Operations'];

/** The data-deletion scopes narrower than a dataset or a source, and the job every scope answers with. */
export const deletionRoutes: Routes = (app, engine) => {
  const r = typed(app);
  const accepted = { 202: DataDeletionJob, ...errors(400, 401, 403, 404, 409) };
  r.delete('/v1/admin/uploads/:upload_session_id', { schema: { tags, params: UploadSessionPath, response: accepted } }, async (req, reply) =>
    reply.status(202).send(await engine.deletion.upload(caller(req), req.params.upload_session_id)),
  );
  r.delete('/v1/admin/objects', { schema: { tags, querystring: ObjectDeletionQuery, response: accepted } }, async (req, reply) =>
    reply.status(202).send(await engine.deletion.object(caller(req), req.query.source_id, req.query.key)),
  );
  r.delete('/v1/admin/datasets/:dataset_id/records/:record_id', { schema: { tags, params: RecordPath, response: accepted } }, async (req, reply) =>
    reply.status(202).send(await engine.deletion.record(caller(req), req.params.dataset_id, req.params.record_id)),
  );
  r.get('/v1/admin/data-deletion-jobs/:job_id', { schema: { tags, params: JobPath, response: { 200: DataDeletionJob, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.deletion.get(caller(req), req.params.job_id),
  );
};
