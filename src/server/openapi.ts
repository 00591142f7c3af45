import { LIMITS } from '../api/limits.js';
import { TENANT_HEADER } from './auth.js';
import { POLICY, policyKey } from './policy.js';

/** The spec's endpoint groups, in its order: every operation carries one of them. */
export const SPEC_TAGS = ['Identity', 'Platform', 'Datasets and schema', 'Search and query', 'Views', 'Query Endpoints', 'Exports', 'Sources and ingest', 'Connectors', 'Detections', 'Fields', 'Operations'];

const tenantHeader = (description: string) => ({ type: 'string', minLength: 1, maxLength: LIMITS.id, description });

/**
 * How /openapi.json shows a route, from its entry in the route policy: the tenant header (required
 * on tenant routes; on ingest routes only with tenant credentials, not with the source's ingest
 * token), the bearer scheme on authenticated routes and none on public ones. Documentation only: validation and auth are not changed.
 */
export function documentRoute({ schema, url, route }: { schema: Record<string, any>; url: string; route: { method: string | string[] } }) {
  const method = [route.method].flat()[0];
  const policy = POLICY[policyKey(method, url)];
  if (!policy || schema?.hide) return { schema, url };
  const doc: Record<string, any> = { ...schema };
  doc.security = policy.auth === 'none' ? [] : [{ bearer: [] }];
  // a query string of any names (a query endpoint's own parameters): one exploded object parameter
  const anyName = doc.querystring && !doc.querystring.properties && (doc.querystring.additionalProperties ?? Object.values(doc.querystring.patternProperties ?? {})[0]);
  if (anyName) {
    doc.querystring = { type: 'object', properties: { params: { type: 'object', additionalProperties: anyName, description: "the endpoint's parameters, each as its own query parameter (?name=value)" } } };
  }
  if (policy.auth === 'tenant' || policy.auth === 'ingest') {
    const own = (doc.headers ?? { type: 'object', properties: {} }) as { properties: Record<string, unknown>; required?: string[] };
    const description = policy.auth === 'tenant'
      ? 'the tenant the request acts in (GET /v1/me lists those the token reaches)'
      : "the tenant the request acts in: required with tenant credentials, not with the source's ingest token";
    doc.headers = {
      ...own,
      type: 'object',
      properties: { ...own.properties, [TENANT_HEADER]: tenantHeader(description) },
      required: [...(own.required ?? []), ...(policy.auth === 'tenant' ? [TENANT_HEADER] : [])],
    };
  }
  return { schema: doc, url };
}

/**
 * JSON Schema's numeric `exclusiveMinimum: 0` in OpenAPI 3.0's words (`minimum: 0, exclusiveMinimum:
 * true`), throughout the document.
 */
export function asOpenApi30<T>(value: T): T {
  if (Array.isArray(value)) return value.map(asOpenApi30) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = asOpenApi30(v);
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[exclusive] === 'number') Object.assign(out, { [bound]: out[exclusive], [exclusive]: true });
  }
  // a map's key pattern is JSON Schema's alone: its values are what 3.0 can say (the server still checks the keys)
  if (out.patternProperties && typeof out.patternProperties === 'object') {
    out.additionalProperties ??= Object.values(out.patternProperties)[0] ?? true;
    delete out.patternProperties;
  }
  delete out.propertyNames;
  return out as T;
}
