import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import { DownloadQuery, Export, ExportCreate, ExportList, ExportListQuery, ExportPath } from '../../api/exports.js';
import { caller } from '../auth.js';
import { serverOrigin } from '../publicUrl.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Exports'];
const params = ExportPath;

export const exportRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/export', { schema: { tags, body: ExportCreate, response: { 202: Export, ...errors(400, 401, 403, 404, 422, 503) } } }, async (req, reply) =>
    reply.status(202).send(await engine.exports.create(caller(req), req.body)),
  );
  r.get('/v1/export', { schema: { tags, querystring: ExportListQuery, response: { 200: ExportList, ...errors(400, 401, 403, 422) } } }, async (req) =>
    engine.exports.list(caller(req), req.query, serverOrigin(req)),
  );
  r.get('/v1/export/:export_id', { schema: { tags, params, response: { 200: Export, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.exports.get(caller(req), req.params.export_id, serverOrigin(req)),
  );
  r.delete('/v1/export/:export_id', { schema: { tags, params, response: { 200: Export, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.exports.delete(caller(req), req.params.export_id),
  );
  // The signature in the query is the authentication: the file streams as it is on disk.
  r.get(
    '/v1/export/:export_id/download',
    { schema: { tags, security: [], params, querystring: DownloadQuery, response: { 200: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }), ...errors(403, 404, 409) } } },
    async (req, reply) => {
      const file = engine.exports.download(req.params.export_id, req.query);
      return reply
        .header('content-type', file.content_type)
        .header('content-length', file.size)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .send(file.body);
    },
  );
};
