import { Dataset, DatasetCreate, DatasetList, DatasetPath } from '../../api/datasets.js';
import { DataDeletionJob } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Datasets and schema'];

export const datasetRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/admin/datasets', { schema: { tags, body: DatasetCreate, response: { 201: Dataset, ...errors(400, 401, 403, 409, 422) } } }, async (req, reply) =>
    reply.status(201).send(await engine.datasets.create(caller(req), req.body)),
  );
  r.get('/v1/datasets', { schema: { tags, response: { 200: DatasetList, ...errors(400, 401, 403) } } }, async (req) => ({
    datasets: engine.datasets.list(caller(req)),
    next_cursor: null,
  }));
  r.get('/v1/datasets/:dataset_id', { schema: { tags, params: DatasetPath, response: { 200: Dataset, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.datasets.get(caller(req), req.params.dataset_id),
  );
  r.delete('/v1/admin/datasets/:dataset_id', { schema: { tags, params: DatasetPath, response: { 202: DataDeletionJob, ...errors(400, 401, 403, 404, 409) } } }, async (req, reply) =>
    reply.status(202).send(await engine.deletion.dataset(caller(req), req.params.dataset_id)),
  );
};
