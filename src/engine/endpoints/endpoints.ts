import type { Endpoint, EndpointCreate, EndpointList, EndpointListQuery, EndpointParam, EndpointUpdate } from '../../api/endpoints.js';
import type { SearchEnvelope, SearchRequest } from '../../api/search.js';
import type { SqlEnvelope } from '../../api/sql.js';
import type { Sql } from '../sql/sql.js';
import type { Caller } from '../auth/caller.js';
import { Conflict, Invalid, NotFound, Refused, type Issue } from '../errors.js';
import { now } from '../ids.js';
import type { Search } from '../search/search.js';
import { prefixRange, scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

type Value = string | number | boolean | string[];
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$/;

/** Every placeholder named anywhere in a string member of a request. */
function placeholders(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(PLACEHOLDER)) out.add(m[1]!);
  else if (Array.isArray(value)) value.forEach((v) => placeholders(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => placeholders(v, out));
  return out;
}

/** A value as one quoted phrase of q: its quotes and backslashes escaped, so it can never close the phrase. */
const phrase = (v: Value): string => `"${String(Array.isArray(v) ? v.join(' ') : v).replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * Fills a request's placeholders. A string that is one placeholder becomes the typed value itself
 * (a number, a list); a placeholder inside a longer string becomes its text. In `q` every value is
 * a quoted phrase.
 */
function fill(value: unknown, values: Record<string, Value>, inQ = false): unknown {
  if (typeof value === 'string') {
    if (inQ) return value.replace(PLACEHOLDER, (_, n: string) => (values[n] === undefined ? '' : phrase(values[n]!)));
    const whole = WHOLE.exec(value);
    if (whole) return values[whole[1]!] ?? null;
    return value.replace(PLACEHOLDER, (_, n: string) => (values[n] === undefined ? '' : String(values[n])));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, values));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values, k === 'q')]));
  return value;
}

/** Turns one raw value (a query-string text, or a JSON value) into the parameter's type, or says why not. */
function coerce(p: EndpointParam, raw: unknown, fromQuery: boolean): { ok: true; value: Value } | { ok: false; msg: string } {
  const bad = (msg: string) => ({ ok: false as const, msg });
  const one = fromQuery && Array.isArray(raw) && p.type !== 'string[]' ? raw[raw.length - 1] : raw;
  switch (p.type) {
    case 'string':
      return typeof one === 'string' ? { ok: true, value: one } : bad('Input should be a valid string');
    case 'timestamp':
      return typeof one === 'string' && !Number.isNaN(Date.parse(one)) ? { ok: true, value: new Date(one).toISOString() } : bad('Input should be a valid timestamp');
    case 'integer':
    case 'number': {
      const n = typeof one === 'number' ? one : typeof one === 'string' && fromQuery && one.trim() !== '' ? Number(one) : NaN;
      if (!Number.isFinite(n)) return bad(`Input should be a valid ${p.type}`);
      if (p.type === 'integer' && !Number.isInteger(n)) return bad('Input should be a valid integer');
      return { ok: true, value: n };
    }
    case 'boolean':
      if (typeof one === 'boolean') return { ok: true, value: one };
      if (fromQuery && (one === 'true' || one === 'false')) return { ok: true, value: one === 'true' };
      return bad('Input should be a valid boolean');
    case 'string[]': {
      const list = typeof raw === 'string' ? (fromQuery ? [raw] : null) : raw;
      return Array.isArray(list) && list.every((s) => typeof s === 'string') ? { ok: true, value: list as string[] } : bad('Input should be a valid list of strings');
    }
  }
}

function bounds(p: EndpointParam, v: Value): string | null {
  if (p.enum && !(Array.isArray(v) ? v : [v]).every((x) => p.enum!.includes(x as string | number))) return `Input should be one of ${p.enum.map((e) => JSON.stringify(e)).join(', ')}`;
  const n = typeof v === 'number' ? v : null;
  if (n !== null && p.min !== undefined && n < p.min) return `Input should be greater than or equal to ${p.min}`;
  if (n !== null && p.max !== undefined && n > p.max) return `Input should be less than or equal to ${p.max}`;
  return null;
}

/** answers kept across all tenants: at most this many, and this many bytes (as JSON) */
export const CACHE_ENTRIES = 1000;
export const CACHE_BYTES = 64 * 2 ** 20;

type Answer = SearchEnvelope | SqlEnvelope;

/**
 * Answers by key, each with the data version it was made at and its expiry: a lookup whose
 * version differs (a dataset it reads received data) or that expired misses and drops it. The
 * least recently used go first once the entries or bytes pass the bound; an answer larger than a
 * tenth of the bytes is not kept.
 */
class AnswerCache {
  private readonly entries = new Map<string, { version: string; expires: number; bytes: number; answer: Answer }>();
  private bytes = 0;
  constructor(private readonly maxEntries: number, private readonly maxBytes: number) {}

  get(key: string, version: string): Answer | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.drop(key);
    if (e.version !== version || e.expires <= Date.now()) return undefined;
    this.entries.set(key, e); // most recently used last
    this.bytes += e.bytes;
    return structuredClone(e.answer);
  }

  put(key: string, version: string, answer: Answer, ttlMs: number): void {
    const bytes = Buffer.byteLength(JSON.stringify(answer));
    if (bytes > this.maxBytes / 10) return;
    this.drop(key);
    this.entries.set(key, { version, expires: Date.now() + ttlMs, bytes, answer: structuredClone(answer) });
    this.bytes += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }
}

/**
 * Query endpoints: saved searches with typed parameters, run by any member. Stored under
 * `[t, 'endpoint', name]`.
 */
export class Endpoints {
  private readonly cache = new AnswerCache(CACHE_ENTRIES, CACHE_BYTES);

  constructor(private readonly store: Store, private readonly search: Search, private readonly sql: Sql) {}

  /** Refuses a definition that could not run: both or neither of sql and search_request, placeholders and parameters that disagree, a statement the SQL guard refuses. */
  private async check(caller: Caller, req: EndpointUpdate): Promise<void> {
    if ((req.sql === undefined) === (req.search_request === undefined)) {
      const msg = 'exactly one of sql and search_request';
      throw new Invalid(msg, ['sql', 'search_request'].map((k) => ({ loc: ['body', k], msg, type: req.sql === undefined ? 'missing' : 'value_error' })));
    }
    const issues: Issue[] = [];
    const declared = new Map<string, number>();
    (req.params ?? []).forEach((p, i) => {
      if (declared.has(p.name)) issues.push({ loc: ['body', 'params', i, 'name'], msg: `parameter ${p.name} is declared twice`, type: 'value_error' });
      declared.set(p.name, i);
      if (p.default !== undefined) {
        const c = coerce(p, p.default, false);
        const why = c.ok ? bounds(p, c.value) : c.msg;
        if (why) issues.push({ loc: ['body', 'params', i, 'default'], msg: why, type: 'value_error', input: p.default });
      }
    });
    if (req.sql !== undefined) {
      (req.params ?? []).forEach((p, i) => {
        if (p.type === 'string[]') issues.push({ loc: ['body', 'params', i, 'type'], msg: 'a SQL endpoint takes scalar parameters only', type: 'value_error', input: p.type });
      });
      if (issues.length) throw new Invalid(issues[0]!.msg, issues);
      // the guard, and the statement's $names against the declared ones (nulls bound: only the shape is checked)
      await this.sql.check(caller, req.sql, Object.fromEntries((req.params ?? []).map((p) => [p.name, null]))).catch((err: unknown) => {
        // a statement that does not bind (an unknown table or column) is a bad definition, not a bad request
        if (err instanceof Refused && err.status === 400) throw new Invalid(err.message, [{ loc: ['body', 'sql'], msg: err.message, type: 'value_error' }]);
        throw err;
      });
      return;
    }
    const used = placeholders(req.search_request);
    for (const name of used)
      if (!declared.has(name)) issues.push({ loc: ['body', 'search_request'], msg: `placeholder {{${name}}} names no declared parameter`, type: 'value_error', input: name });
    for (const [name, i] of declared)
      if (!used.has(name)) issues.push({ loc: ['body', 'params', i, 'name'], msg: `parameter ${name} is used by no placeholder`, type: 'value_error', input: name });
    if (issues.length) throw new Invalid(issues[0]!.msg, issues);
  }

  private toEndpoint(name: string, req: EndpointUpdate, createdAt: string): Endpoint {
    return { name, description: req.description ?? null, sql: req.sql ?? null, search_request: req.search_request ?? null, params: (req.params ?? []).map((p) => ({ ...p, required: p.required ?? false })), cache_ttl_s: req.cache_ttl_s ?? null, created_at: createdAt, updated_at: now() };
  }

  async create(caller: Caller, req: EndpointCreate): Promise<Endpoint> {
    await this.check(caller, req);
    const key = keys.endpoint(caller.tenant_id, req.name);
    const made = this.toEndpoint(req.name, req, now());
    const stored = await this.store.meta.transaction(() => {
      if (this.store.meta.get(key) !== undefined) return false;
      this.store.meta.put(key, made);
      return true;
    });
    if (!stored) throw new Conflict(`query endpoint ${req.name} already exists`);
    return made;
  }

  async update(caller: Caller, name: string, req: EndpointUpdate): Promise<Endpoint> {
    const old = this.get(caller, name);
    await this.check(caller, req);
    const made = this.toEndpoint(name, req, old.created_at);
    await this.store.meta.put(keys.endpoint(caller.tenant_id, name), made);
    return made;
  }

  /** A page of the tenant's endpoints, by name. */
  list(caller: Caller, q: EndpointListQuery = {}): EndpointList {
    const limit = q.limit ?? 100;
    const prefix = keys.endpoint(caller.tenant_id);
    const page: Endpoint[] = [];
    for (const { key, value } of this.store.meta.getRange(prefixRange(prefix, q.cursor ? [...prefix, q.cursor] : prefix))) {
      if (key[prefix.length] === q.cursor) continue;
      if (page.length === limit) return { query_endpoints: page, next_cursor: page[limit - 1]!.name };
      page.push(value as Endpoint);
    }
    return { query_endpoints: page, next_cursor: null };
  }

  get(caller: Caller, name: string): Endpoint {
    const e: Endpoint | undefined = this.store.meta.get(keys.endpoint(caller.tenant_id, name));
    if (!e) throw new NotFound(`query endpoint ${name} not found`);
    return e;
  }

  async remove(caller: Caller, name: string): Promise<Endpoint> {
    const e = this.get(caller, name);
    await this.store.meta.remove(keys.endpoint(caller.tenant_id, name));
    return e;
  }

  /** The tenant's endpoints as an OpenAPI 3 document: each a GET with its typed query parameters and a POST with them as a body. */
  openapi(caller: Caller): Record<string, unknown> {
    const schemaOf = (p: EndpointParam): Record<string, unknown> => {
      const base: Record<string, unknown> =
        p.type === 'string[]' ? { type: 'array', items: { type: 'string' } } : p.type === 'timestamp' ? { type: 'string', format: 'date-time' } : { type: p.type };
      if (p.enum) base.enum = p.enum;
      if (p.min !== undefined) base.minimum = p.min;
      if (p.max !== undefined) base.maximum = p.max;
      if (p.default !== undefined) base.default = p.default;
      return base;
    };
    const paths: Record<string, unknown> = {};
    for (const { value: e } of scanPrefix<Endpoint>(this.store.meta, keys.endpoint(caller.tenant_id))) {
      const answer = { 200: { description: e.sql !== null ? 'the SQL envelope (mode "sql")' : 'the search envelope' }, 422: { description: 'a parameter missing, unknown or of the wrong type' } };
      const summary = e.description ?? undefined;
      paths[`/v1/query-endpoints/${e.name}`] = {
        get: {
          operationId: `get_${e.name}`, summary, responses: answer,
          parameters: e.params.map((p) => ({ name: p.name, in: 'query', required: p.required ?? false, description: p.description, schema: schemaOf(p), ...(p.type === 'string[]' ? { style: 'form', explode: true } : {}) })),
        },
        post: {
          operationId: `post_${e.name}`, summary, responses: answer,
          requestBody: { required: e.params.some((p) => p.required), content: { 'application/json': { schema: {
            type: 'object', additionalProperties: false,
            properties: { params: { type: 'object', additionalProperties: false, required: e.params.filter((p) => p.required).map((p) => p.name), properties: Object.fromEntries(e.params.map((p) => [p.name, { ...schemaOf(p), description: p.description }])) } },
          } } } },
        },
      };
    }
    return { openapi: '3.0.3', info: { title: `query endpoints of tenant ${caller.tenant_id}`, version: '1' }, paths };
  }

  /** Runs an endpoint with raw values: from the query string (`where` = 'query', texts) or a JSON body. */
  async run(caller: Caller, name: string, raw: Record<string, unknown>, where: 'query' | 'body'): Promise<SearchEnvelope | SqlEnvelope> {
    const e = this.get(caller, name);
    const issues: Issue[] = [];
    const loc = (n: string) => [where, n];
    const values: Record<string, Value> = {};
    const declared = new Map(e.params.map((p) => [p.name, p]));
    for (const n of Object.keys(raw)) if (!declared.has(n)) issues.push({ loc: loc(n), msg: `unknown parameter ${n}`, type: 'extra_forbidden', input: raw[n] });
    for (const p of e.params) {
      const given = raw[p.name];
      if (given === undefined) {
        if (p.default !== undefined) values[p.name] = p.default as Value;
        else if (p.required) issues.push({ loc: loc(p.name), msg: 'Field required', type: 'missing' });
        continue;
      }
      const c = coerce(p, given, where === 'query');
      const why = c.ok ? bounds(p, c.value) : c.msg;
      if (why || !c.ok) issues.push({ loc: loc(p.name), msg: why!, type: 'value_error', input: given });
      else values[p.name] = c.value;
    }
    if (issues.length) throw new Invalid(`parameter ${String(issues[0]!.loc[1])}: ${issues[0]!.msg}`, issues);
    const ttl = e.cache_ttl_s ?? 0;
    if (ttl <= 0) return this.answer(caller, e, values);
    const t = caller.tenant_id;
    const key = JSON.stringify([t, e.name, e.updated_at, Object.keys(values).sort().map((k) => [k, values[k]])]);
    const version = this.dataVersion(t, e);
    const hit = this.cache.get(key, version);
    if (hit) return hit;
    const answer = await this.answer(caller, e, values);
    this.cache.put(key, version, answer, ttl * 1000);
    return answer;
  }

  /**
   * What the datasets an endpoint reads hold now: each one's sequence, which every ingest moves. A
   * search names its datasets (all of the tenant's when it names none); a SQL statement counts as
   * reading all of them.
   */
  private dataVersion(t: string, e: Endpoint): string {
    const named = e.search_request?.datasets;
    const rows = named?.length
      ? named.map((d) => [d, (this.store.meta.get(keys.dataset(t, d)) as { seq?: number } | undefined)?.seq ?? null])
      : [...scanPrefix<{ seq?: number }>(this.store.meta, keys.dataset(t))].map(({ key, value }) => [key[2], value.seq ?? null]);
    return JSON.stringify(rows);
  }

  private answer(caller: Caller, e: Endpoint, values: Record<string, Value>): Promise<SearchEnvelope | SqlEnvelope> {
    if (e.sql !== null) {
      const named = Object.fromEntries(e.params.map((p) => [p.name, (values[p.name] ?? null) as string | number | boolean | null]));
      return this.sql.query(caller, { sql: e.sql }, named);
    }
    return this.search.run(caller, fill(e.search_request, values) as SearchRequest);
  }
}
