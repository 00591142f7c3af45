import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { EngineError, httpStatusOf, Invalid } from '../engine/errors.js';
import { logFailure, type LogSink } from './failures.js';

const LOCATIONS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface AjvError { instancePath: string; keyword: string; message?: string; params: Record<string, unknown> }

/**
 * Ajv's errors in FastAPI's HTTPValidationError shape: loc, msg, type, ctx — the first
 * `LIMITS.validationIssues` of them, each echoing its input only when that is small: a body of
 * 100,000 wrong items must not cost 100,000 issues to write out.
 */
function validationDetail(context: string, errors: AjvError[], input: unknown) {
  return errors.slice(0, LIMITS.validationIssues).map((e) => {
    const loc: (string | number)[] = [LOCATIONS[context] ?? context, ...e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
    if (e.keyword === 'required') return { loc: [...loc, String(e.params.missingProperty)], msg: 'Field required', type: 'missing' };
    if (e.keyword === 'additionalProperties') return { loc: [...loc, String(e.params.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    let value: unknown = input;
    for (const part of loc.slice(1)) value = value == null ? undefined : (value as Record<string | number, unknown>)[part];
    return { loc, msg: e.message ?? 'invalid value', type: e.keyword, ctx: e.params, input: preview(value) };
  });
}

/** A value short enough to echo: long strings are cut, large arrays and objects left out. */
function preview(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 256 ? `${value.slice(0, 256)}…` : value;
  if (value !== null && typeof value === 'object') return (Array.isArray(value) ? value.length : Object.keys(value).length) > 20 ? undefined : value;
  return value;
}

/**
 * Engine errors and framework errors to the spec's ApiError / HTTPValidationError. Every 5xx is
 * logged to `sink`; an unexpected one answers only "internal error" with the request id.
 */
export function errorHandler(sink: LogSink) {
  return (err: FastifyError & { validationContext?: string }, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof EngineError) {
      const status = httpStatusOf(err);
      if (err instanceof Invalid) return reply.status(status).send({ detail: err.code ? { code: err.code, message: err.message } : err.issues });
      if (status === 401) reply.header('www-authenticate', 'Bearer');
      // a 5xx names its request id, which its log line carries too
      const message = status >= 500 ? `${err.message} (request id ${req.id})` : err.message;
      if (status >= 500) logFailure(sink, req, status, err);
      return reply.status(status).send({ detail: err.code ? { code: err.code, message } : message });
    }
    if (err.validation) {
      const input = { body: req.body, querystring: req.query, params: req.params, headers: req.headers }[err.validationContext ?? 'body'];
      return reply.status(422).send({ detail: validationDetail(err.validationContext ?? 'body', err.validation as AjvError[], input) });
    }
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err instanceof SyntaxError) {
      return reply.status(422).send({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid', ctx: { error: err.message } }] });
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.status(413).send({ detail: `request body too large (at most ${LIMITS.bodyBytes} bytes)` });
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.status(415).send({ detail: err.message });
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return reply.status(err.statusCode).send({ detail: err.message });
    logFailure(sink, req, 500, err);
    return reply.status(500).send({ detail: `internal error (request id ${req.id})` });
  };
}
