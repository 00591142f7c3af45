import { SchemaRebuildJob, SqlEnvelope, SqlRequest } from '../../api/sql.js';
import { DatasetPath } from '../../api/datasets.js';
import { DatasetJobPath } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

export const sqlRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/sql', { schema: { tags: ['Search and query'], body: SqlRequest, response: { 200: SqlEnvelope, ...errors(400, 401, 403, 422, 503) } } }, async (req) =>
    engine.sql.query(caller(req), req.body),
  );
  const tags = ['Datasets and schema'];
  r.post('/v1/admin/datasets/:dataset_id/schema/rebuild', { schema: { tags, params: DatasetPath, response: { 202: SchemaRebuildJob, ...errors(400, 401, 403, 404, 409) } } }, async (req, reply) =>
    reply.status(202).send(await engine.sql.rebuildSchema(caller(req), req.params.dataset_id)),
  );
  r.get('/v1/admin/datasets/:dataset_id/schema/rebuilds/:job_id', { schema: { tags, params: DatasetJobPath, response: { 200: SchemaRebuildJob, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.sql.schemaRebuild(caller(req), req.params.dataset_id, req.params.job_id),
  );
};
