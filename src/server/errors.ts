import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { LIMITS } from '../api/limits.js';
import { EngineError, httpStatusOf, Invalid } from '../engine/errors.js';
import { logFailure, type LogSink } from './failures.js';

const LOCATIONS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

interface AjvError { instancePath: string; schemaPath: string; keyword: string; message?: string; params: Record<string, unknown> }

const VALUE_KEYWORDS = new Set(['const', 'enum', 'type']);
const TYPE_NAMES: Record<string, string> = { string: 'a valid string', integer: 'a valid integer', number: 'a valid number', boolean: 'a valid boolean', null: 'null', object: 'an object', array: 'an array' };

/** 'a', 'b' or 'c' */
const either = (alternatives: string[]) => (alternatives.length < 2 ? alternatives.join('') : `${alternatives.slice(0, -1).join(', ')} or ${alternatives.at(-1)}`);

/**
 * Ajv reports a value that fails a union (an enum of literals, a nullable member) once per branch
 * and once more for the `anyOf`. Each union failure becomes one error here: when every branch only
 * wanted another value or type, one `enum` error that lists them all; else the errors of the first
 * branch the value's type fits (a string too long for "a string or null" is too long).
 */
function oneErrorPerProblem(errors: AjvError[]): AjvError[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf');
  const inUnion = (e: AjvError, u: AjvError) => e !== u && e.schemaPath.startsWith(`${u.schemaPath}/`);
  // the outermost unions: an inner one is taken apart with its outer one
  const outer = unions.filter((u) => !unions.some((o) => inUnion(u, o)));
  const out: AjvError[] = [];
  const done = new Set<AjvError>();
  for (const e of errors) {
    if (done.has(e)) continue;
    const union = outer.find((u) => u === e || inUnion(e, u));
    if (!union) {
      out.push(e);
      continue;
    }
    const members = errors.filter((x) => x === union || inUnion(x, union));
    for (const m of members) done.add(m);
    const leaves = members.filter((x) => x.keyword !== 'anyOf');
    const sameValue = leaves.every((x) => x.instancePath === union.instancePath && VALUE_KEYWORDS.has(x.keyword));
    if (sameValue) {
      const values = leaves.flatMap((x) =>
        x.keyword === 'const' ? [JSON.stringify(x.params.allowedValue)] : x.keyword === 'enum' ? (x.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)) : [],
      );
      // a literal's own type check adds nothing to its value
      const types = leaves.filter((x) => x.keyword === 'type' && !leaves.some((c) => c.keyword === 'const' && c.schemaPath.replace(/\/const$/, '') === x.schemaPath.replace(/\/type$/, '')));
      const alternatives = [...new Set([...values.map((v) => v.replace(/^"(.*)"$/, "'$1'")), ...types.map((x) => TYPE_NAMES[String(x.params.type)] ?? String(x.params.type))])];
      const message = `Input should be ${either(alternatives)}`;
      out.push({ instancePath: union.instancePath, schemaPath: union.schemaPath, keyword: values.length ? 'enum' : 'type', message, params: { expected: either(alternatives) } });
      continue;
    }
    // the first branch whose type the value has: its own errors (each of them one problem again)
    const branchOf = (x: AjvError) => x.schemaPath.slice(union.schemaPath.length + 1).split('/')[0];
    const mistyped = new Set(leaves.filter((x) => x.instancePath === union.instancePath && x.keyword === 'type' && x.schemaPath === `${union.schemaPath}/${branchOf(x)}/type`).map(branchOf));
    const branch = leaves.map(branchOf).find((b) => !mistyped.has(b));
    if (branch === undefined) {
      out.push(union); // no branch to speak for: the union's own error, never none
      continue;
    }
    out.push(...oneErrorPerProblem(members.filter((x) => x !== union && branchOf(x) === branch)));
  }
  return out;
}

/**
 * Ajv's errors in FastAPI's HTTPValidationError shape: loc, msg, type, ctx — the first
 * `LIMITS.validationIssues` of them, each echoing its input only when that is small: a body of
 * 100,000 wrong items must not cost 100,000 issues to write out.
 */
function validationDetail(context: string, errors: AjvError[], input: unknown) {
  // a union's branches come just before it: a bounded head of the errors is enough for the issues listed
  return oneErrorPerProblem(errors.slice(0, LIMITS.validationIssues * 20)).slice(0, LIMITS.validationIssues).map((e) => {
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
