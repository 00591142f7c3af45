import {
  CompletedUpload, PartPath, PartQuery, PartStored, UploadAbort, UploadAborted, UploadComplete, UploadCreate, UploadPartList, UploadPartsRequest,
  UploadSession, UploadSourcePath,
} from '../../api/uploads.js';
import { caller } from '../auth.js';
import { serverOrigin } from '../publicUrl.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Sources and ingest'];
const params = UploadSourcePath;

export const uploadRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.post('/v1/ingest/sources/:source_key/uploads', { schema: { tags, params, body: UploadCreate, response: { 201: UploadSession, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req, reply) =>
    reply.status(201).send(await engine.uploads.create(caller(req), req.params.source_key, req.body)),
  );
  r.post('/v1/ingest/sources/:source_key/uploads/parts', { schema: { tags, params, body: UploadPartsRequest, response: { 200: UploadPartList, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req) =>
    engine.uploads.partUrls(caller(req), req.params.source_key, req.body, serverOrigin(req)),
  );
  r.post(
    '/v1/ingest/sources/:source_key/uploads/complete',
    { schema: { tags, params, body: UploadComplete, response: { 200: CompletedUpload, ...errors(400, 401, 403, 404, 409, 413, 422, 507) } } },
    async (req) => engine.uploads.complete(caller(req), req.params.source_key, req.body),
  );
  r.post('/v1/ingest/sources/:source_key/uploads/abort', { schema: { tags, params, body: UploadAbort, response: { 200: UploadAborted, ...errors(400, 401, 403, 404, 409, 422) } } }, async (req) =>
    engine.uploads.abort(caller(req), req.params.source_key, req.body.upload_session_id),
  );

  // The body is the part itself, in any content type, streamed to disk unparsed; the URL's signature is its authentication.
  app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    typed(raw).put(
      '/v1/uploads/:upload_session_id/parts/:part_number',
      { schema: { tags, security: [], params: PartPath, querystring: PartQuery, response: { 200: PartStored, ...errors(403, 404, 409, 413, 507) } } },
      async (req, reply) => {
        const length = req.headers['content-length'];
        const part = await engine.uploads.putPart({ ...req.params, ...req.query }, req.raw, length === undefined ? undefined : Number(length));
        return reply.header('etag', `"${part.etag}"`).send(part);
      },
    );
  });
};
