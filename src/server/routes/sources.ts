import { HostedSourcePut, IngestTokenMinted, Source, SourceList, SourceListQuery, SourcePath, SourcePut } from '../../api/sources.js';
import { DataDeletionJob } from '../../api/jobs.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Sources and ingest'];

export const sourceRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.put('/v1/admin/sources/:source_id', { schema: { tags, params: SourcePath, body: SourcePut, response: { 200: Source, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req) =>
    engine.sources.put(caller(req), req.params.source_id, req.body),
  );
  r.put(
    '/v1/admin/hosted-sources/:source_id',
    { schema: { tags, params: SourcePath, body: HostedSourcePut, response: { 200: Source, ...errors(400, 401, 403, 404, 409, 422) } } },
    async (req) => engine.sources.put(caller(req), req.params.source_id, req.body),
  );
  r.get('/v1/admin/sources/:source_id', { schema: { tags, params: SourcePath, response: { 200: Source, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.sources.get(caller(req).tenant_id, req.params.source_id),
  );
  r.get('/v1/admin/sources', { schema: { tags, querystring: SourceListQuery, response: { 200: SourceList, ...errors(400, 401, 403) } } }, async (req) => ({
    sources: engine.sources.list(caller(req).tenant_id, req.query.dataset_id),
    next_cursor: null,
  }));
  r.delete('/v1/admin/sources/:source_id', { schema: { tags, params: SourcePath, response: { 202: DataDeletionJob, ...errors(400, 401, 403, 404) } } }, async (req, reply) =>
    reply.status(202).send(await engine.deletion.source(caller(req), req.params.source_id)),
  );
  r.post('/v1/admin/sources/:source_id/ingest-token', { schema: { tags, params: SourcePath, response: { 200: IngestTokenMinted, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.sources.rotateIngestToken(caller(req), req.params.source_id),
  );
  r.delete('/v1/admin/sources/:source_id/ingest-token', { schema: { tags, params: SourcePath, response: { 200: Source, ...errors(400, 401, 403, 404, 409) } } }, async (req) =>
    engine.sources.revokeIngestToken(caller(req), req.params.source_id),
  );
};
