import { Type } from '@sinclair/typebox';
import type { Readable } from 'node:stream';
import { ObjectImageQuery, ObjectImageUrl, ObjectImageUrlQuery } from '../../api/images.js';
import { caller } from '../auth.js';
import { serverOrigin } from '../publicUrl.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Search and query'];

export const imageRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/v1/object-image-url', { schema: { tags, querystring: ObjectImageUrlQuery, response: { 200: ObjectImageUrl, ...errors(400, 401, 403, 404, 422) } } }, async (req) =>
    engine.images.url(caller(req), req.query, serverOrigin(req)),
  );
  // The signature in the query is the authentication; the bytes go with the type their magic bytes tell, never sniffed by the client.
  r.get(
    '/v1/object-images/download',
    { schema: { tags, security: [], querystring: ObjectImageQuery, response: { 200: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }), ...errors(403, 404) } } },
    async (req, reply) => {
      const image = engine.images.open(req.query);
      return reply
        .header('content-type', image.content_type)
        .header('content-length', image.size)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, max-age=300')
        .send(image.body);
    },
  );
};
