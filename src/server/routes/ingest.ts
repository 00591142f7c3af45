import { IngestOptions, IngestRun, IngestRunList, RunListQuery, RunPath } from '../../api/ingest.js';
import { SourceKeyPath } from '../../api/sources.js';
import { Refused } from '../../engine/errors.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Sources and ingest'];

/**
 * A stream body's Content-Encoding: none or gzip. The body is stored as sent, never decoded here
 * (fastify leaves it alone too): an ingest run decompresses a gzip object, told by its first bytes,
 * so gzip is decoded exactly once whether the header says so or not. Any other coding would be
 * stored as bytes no parser can read: it is refused before anything is stored.
 */
function checkEncoding(header: string | string[] | undefined): void {
  const codings = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity');
  if (codings.length > 1 || (codings.length === 1 && codings[0] !== 'gzip' && codings[0] !== 'x-gzip')) {
    throw new Refused(`Content-Encoding '${String(header)}' is not supported: send the body as it is, or gzip it`, 'unsupported_content_encoding', 400);
  }
}

export const ingestRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/v1/ingest/runs/:ingest_run_id', { schema: { tags, params: RunPath, response: { 200: IngestRun, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.ingest.get(caller(req), req.params.ingest_run_id),
  );
  r.post('/v1/ingest/runs/:ingest_run_id/retry', { schema: { tags, params: RunPath, response: { 200: IngestRun, ...errors(400, 401, 403, 404, 409) } } }, async (req) =>
    engine.ingest.retry(caller(req), req.params.ingest_run_id),
  );
  r.get('/v1/ingest/runs', { schema: { tags, querystring: RunListQuery, response: { 200: IngestRunList, ...errors(400, 401, 403, 422) } } }, async (req) => ({
    runs: engine.ingest.list(caller(req), req.query),
    next_cursor: null,
  }));

  // The body is the object itself, in any content type: it streams to the blob store unparsed.
  app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    typed(raw).post(
      '/v1/ingest/sources/:source_key/stream',
      {
        schema: {
          tags,
          params: SourceKeyPath,
          querystring: IngestOptions,
          response: { 202: IngestRun, ...errors(400, 401, 403, 404, 413, 422, 507) },
        },
      },
      async (req, reply) => {
        checkEncoding(req.headers['content-encoding']);
        const body = (req.body ?? req.raw) as AsyncIterable<Buffer>;
        return reply.status(202).send(await engine.ingest.submit(caller(req), body, { ...req.query, source_key: req.params.source_key }));
      },
    );
  });
};
