import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { Ajv } from 'ajv';
import ajvFormats from 'ajv-formats';
import Fastify, { type FastifyInstance } from 'fastify';
import { ApiError, HTTPValidationError } from '../api/common.js';
import { LIMITS } from '../api/limits.js';
import type { Engine } from '../engine/index.js';
import { authenticate } from './auth.js';
import { clientErrorHandler, frameworkErrors } from './earlyErrors.js';
import { errorHandler } from './errors.js';
import { stderrSink, type LogSink } from './failures.js';
import { BODY_LENGTH, jsonBodies } from './jsonBody.js';
import { closeIdleUntilClosed } from './idleClose.js';
import { POLICY, policyKey } from './policy.js';
import { requestLogger } from './log.js';
import { rateLimits, type RateLimit } from './rateLimit.js';
import { echoRequestId, requestId } from './requestId.js';
import { datasetRoutes } from './routes/datasets.js';
import { deletionRoutes } from './routes/deletion.js';
import { exportRoutes } from './routes/exports.js';
import { imageRoutes } from './routes/images.js';
import { fieldRoutes } from './routes/fields.js';
import { healthRoutes } from './routes/health.js';
import { identityRoutes } from './routes/identity.js';
import { ingestRoutes } from './routes/ingest.js';
import { jobRoutes } from './routes/jobs.js';
import { keyRoutes } from './routes/keys.js';
import { platformRoutes } from './routes/platform.js';
import { searchRoutes } from './routes/search.js';
import { reindexRoutes } from './routes/reindex.js';
import { semanticRoutes } from './routes/semantic.js';
import { sourceRoutes } from './routes/sources.js';
import { sqlRoutes } from './routes/sql.js';
import { uploadRoutes } from './routes/uploads.js';
import { viewRoutes } from './routes/views.js';
import { endpointRoutes } from './routes/endpoints.js';
import { detectionRoutes } from './routes/detections.js';
import { connectorRoutes } from './routes/connectors.js';
import { consoleRoutes } from './routes/console.js';
import { asOpenApi30, documentRoute, SPEC_TAGS } from './openapi.js';
import { serverTiming } from './serverTiming.js';

export interface AppOptions {
  /** where the one-line-per-request log goes (none when absent), and every 5xx (stderr when absent) */
  log?: LogSink;
  /** origin of the URLs the server signs (SVC_PUBLIC_URL, parsed); default: the server's address the client reached */
  publicUrl?: string;
  /** requests per window per credential; none when absent */
  rateLimit?: RateLimit;
}

/**
 * Query strings, paths and headers arrive as text, so their numbers and booleans are coerced; a
 * JSON body is taken as it is — `"id_field": 3` is a wrong type, not the string "3".
 */
const validators = (() => {
  // ajv-formats is CommonJS: its plugin is the module's default export
  const addFormats = (ajvFormats as unknown as { default: (ajv: Ajv) => Ajv }).default;
  const make = (coerceTypes: boolean | 'array', allErrors = true) => addFormats(new Ajv({ allErrors, coerceTypes, removeAdditional: false, useDefaults: false, strict: false }));
  return { body: make(false), firstError: make(false, false), params: make('array') };
})();

/** Bodies longer than this get their first problem reported, not all: 100,000 wrong items would cost seconds. */
const EVERY_ERROR_UP_TO = 64 * 1024;

/** A body validator: a fast check first; every problem listed only for a body short enough to list them cheaply. */
function bodyValidator(schema: object) {
  const first = validators.firstError.compile(schema);
  const every = validators.body.compile(schema);
  const check = (data: unknown) => {
    if (first(data)) return true;
    const long = data !== null && typeof data === 'object' && (BODY_LENGTH.get(data) ?? 0) > EVERY_ERROR_UP_TO;
    if (!long) every(data);
    check.errors = long ? first.errors : every.errors;
    return false;
  };
  check.errors = null as typeof first.errors;
  return check;
}

const registered = new WeakMap<FastifyInstance, { method: string; url: string }[]>();

/** Every route the app registered, as the router saw it. */
export const routesOf = (app: FastifyInstance) => registered.get(app) ?? [];

/** The /v1 API over an engine. */
export async function buildApp(engine: Engine, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    exposeHeadRoutes: false,
    bodyLimit: LIMITS.bodyBytes,
    // long enough that each parameter's own cap answers (422, naming it) rather than the router
    routerOptions: { maxParamLength: LIMITS.pathParam },
    genReqId: requestId,
    frameworkErrors,
    clientErrorHandler,
  });
  echoRequestId(app);
  closeIdleUntilClosed(app);
  jsonBodies(app);
  app.decorate('publicUrl', opts.publicUrl ?? null);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyValidator(schema) : validators.params.compile(schema)));
  // Responses are plain JSON.stringify: the response schemas document the API, they do not filter it.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.decorateRequest('principal', null);
  app.decorateRequest('caller', null);
  app.addSchema(ApiError);
  app.addSchema(HTTPValidationError);
  await app.register(swagger, {
    openapi: {
      info: { title: 'svc', version: '1.0.0', description: 'Search and retrieval for operational data' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearer: [] }],
      tags: SPEC_TAGS.map((name) => ({ name })),
    },
    // shared schemas under their own names (ApiError, HTTPValidationError), not def-0, def-1
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: documentRoute,
    transformObject: (document) => ('openapiObject' in document ? asOpenApi30(document.openapiObject) : document.swaggerObject),
  });
  app.setErrorHandler(errorHandler(opts.log ?? stderrSink));
  app.setNotFoundHandler((_req, reply) => reply.status(404).send({ detail: 'Not Found' }));
  const routes: { method: string; url: string }[] = [];
  registered.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (!POLICY[policyKey(method, route.url)]) throw new Error(`route ${method} ${route.url} has no entry in the route policy`);
      routes.push({ method, url: route.url });
    }
  });
  serverTiming(app); // first: it times the hooks after it
  if (opts.rateLimit) await rateLimits(app, opts.rateLimit);
  await app.register(cookie); // before authenticate, which reads the console's session cookie
  app.addHook('onRequest', authenticate(engine));
  if (opts.log) requestLogger(app, opts.log);
  for (const routes of [healthRoutes, identityRoutes, keyRoutes, platformRoutes, datasetRoutes, fieldRoutes, searchRoutes, viewRoutes, endpointRoutes, detectionRoutes, semanticRoutes, sqlRoutes, sourceRoutes, connectorRoutes, deletionRoutes, reindexRoutes, ingestRoutes, uploadRoutes, jobRoutes, exportRoutes, imageRoutes, consoleRoutes]) routes(app, engine);
  await app.ready();
  return app;
}
