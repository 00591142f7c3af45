import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { expect } from 'vitest';

export type Json = any;
/** `body` is the parsed JSON, or undefined when the answer is empty or not JSON; `text` is the answer as sent. */
export interface Res { status: number; body: Json; text: string; headers: Record<string, string | string[] | undefined> }

export interface CallOpts {
  /** JSON body (serialized here) */
  json?: unknown;
  /** raw body, sent as it is */
  body?: string | Buffer | AsyncIterable<Buffer>;
  /** content type of a raw body (default: application/octet-stream) */
  contentType?: string;
  /** bearer token; `null` sends no Authorization header */
  token?: string | null;
  /** tenant header; `null` sends none */
  tenant?: string | null;
  headers?: Record<string, string>;
}

type Lazy<T> = T | (() => T);
const now = <T>(v: Lazy<T>): T => (typeof v === 'function' ? (v as () => T)() : v);

/**
 * A small HTTP client for one server, acting with one token in one tenant unless told otherwise.
 * `url` and `auth` may be functions, for a file that only knows them once its beforeAll ran.
 */
export function client(url: Lazy<string>, auth: Lazy<{ token?: string; tenant?: string }> = {}) {
  async function call(method: string, path: string, o: CallOpts = {}): Promise<Res> {
    const headers: Record<string, string> = { ...o.headers };
    const { token: defaultToken, tenant: defaultTenant } = now(auth);
    const token = o.token === undefined ? defaultToken : o.token;
    const tenant = o.tenant === undefined ? defaultTenant : o.tenant;
    if (token) headers.authorization = `Bearer ${token}`;
    if (tenant) headers['x-service-tenant-id'] = tenant;
    let body = o.body;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (body !== undefined) headers['content-type'] = o.contentType ?? headers['content-type'] ?? 'application/octet-stream';
    // an absolute URL (a signed part URL) is taken as it is
    const res = await request(path.startsWith('http') ? path : now(url) + path, { method, headers, body: body as Buffer });
    const text = await res.body.text();
    let parsed: Json;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined; // not JSON: callers assert on `text`
    }
    return { status: res.statusCode, body: parsed, text, headers: res.headers };
  }
  return {
    call,
    get: (path: string, o?: CallOpts) => call('GET', path, o),
    post: (path: string, json?: unknown, o?: CallOpts) => call('POST', path, { ...o, json }),
    put: (path: string, json: unknown, o?: CallOpts) => call('PUT', path, { ...o, json }),
    del: (path: string, o?: CallOpts) => call('DELETE', path, o),
  };
}

/** Asserts the status, showing the answer when it is not the expected one; returns the body. */
export function expectStatus(res: Res, status: number, what = ''): Json {
  expect(res.status, `${what ? `${what}: ` : ''}HTTP ${res.status}: ${res.text.slice(0, 500)}`).toBe(status);
  return res.body;
}

/** Polls until `probe` returns something other than undefined, or fails at the deadline. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Streams `body` into a dataset (`format` ndjson or text) and waits for the run to end `ready`; returns the run. */
export async function ingestStream(http: ReturnType<typeof client>, datasetId: string, body: string, format: 'ndjson' | 'text' = 'ndjson'): Promise<Json> {
  const contentType = format === 'ndjson' ? 'application/x-ndjson' : 'text/plain';
  const run = expectStatus(await http.call('POST', `/v1/ingest/sources/${datasetId}/stream?format=${format}`, { body, contentType }), 202);
  const done = await until(`run ${run.ingest_run_id}`, async () => {
    const r = expectStatus(await http.get(`/v1/ingest/runs/${run.ingest_run_id}`), 200);
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(done.status, JSON.stringify(done)).toBe('ready');
  return done;
}
