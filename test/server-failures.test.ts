/**
 * Failures are loud: every response carries an `x-request-id`; every 5xx is one JSON line in the
 * log (request id, route, status, message, stack) and an unexpected one says its request id in
 * the body; the framework's and Node's own refusals (400, 404, 413, 414, 415, 431) keep the
 * `{detail}` shape. A real app on loopback; the 500 is forced by making one engine call throw.
 */
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { Unavailable } from '../src/engine/errors.js';
import { useApp } from './helpers/app.js';
import { client, expectStatus } from './helpers/http.js';
import { rawRequest } from './helpers/raw.js';

const { t, http } = useApp();
const long = (n: number) => 'a'.repeat(n);
const ID = /^req_[0-9a-z]{26}$/;


/** Runs `fn` with one engine method made to throw `err`, then puts it back. */
async function failing<T>(target: object, method: string, err: Error, fn: () => Promise<T>): Promise<T> {
  const own = Object.getOwnPropertyDescriptor(target, method);
  Object.defineProperty(target, method, { configurable: true, writable: true, value: () => { throw err; } });
  try {
    return await fn();
  } finally {
    if (own) Object.defineProperty(target, method, own);
    else delete (target as Record<string, unknown>)[method];
  }
}

describe('request ids', () => {
  it('puts an x-request-id on every response, errors included, each its own', async () => {
    const answers = await Promise.all([
      http.get('/healthz'),
      http.get('/v1/datasets'),
      http.get('/v1/datasets', { token: null }),
      http.get('/no/such/route'),
      http.post('/v1/admin/datasets', { dataset_id: 'NOT A SLUG' }),
      http.call('POST', '/v1/admin/datasets', { body: 'x', contentType: 'text/weird' }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404, 422, 415]);
    const ids = answers.map((a) => a.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(ID);
    expect(new Set(ids).size).toBe(ids.length);
    // the access log line of a request carries the same id
    const logged = t.lines().find((l) => l.request_id === ids[3]);
    expect(logged).toMatchObject({ route: null, status: 404 });
  });

  it("keeps a client's own id when it is short and plain, and replaces any other", async () => {
    const kept = await http.get('/healthz', { headers: { 'x-request-id': 'edge-7f3a.91:2' } });
    expect(kept.headers['x-request-id']).toBe('edge-7f3a.91:2');
    for (const sent of ['has space', '-leading-dash', long(LIMITS.requestId + 1), '{"json":1}']) {
      const res = await http.get('/healthz', { headers: { 'x-request-id': sent } });
      expect(res.headers['x-request-id'], sent).toMatch(ID);
    }
  });
});

describe('5xx', () => {
  it('logs an unexpected error as one JSON line with request id, route and stack; the body names the id and nothing else', async () => {
    const res = await failing(t.engine.datasets, 'list', new TypeError('boom: cannot read the thing'), () => http.get('/v1/datasets?x=1'));
    expectStatus(res, 500);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(ID);
    expect(res.body).toEqual({ detail: `internal error (request id ${id})` });
    const line = t.lines().find((l) => l.level === 'error' && l.request_id === id);
    expect(line).toMatchObject({ method: 'GET', url: '/v1/datasets?x=1', route: '/v1/datasets', status: 500, error: 'boom: cannot read the thing' });
    expect(line!.stack).toMatch(/^TypeError: boom: cannot read the thing\n\s+at /);
    // the server goes on
    expectStatus(await http.get('/v1/datasets'), 200);
  });

  it("logs an engine's own 5xx too, keeping its detail and naming the request id", async () => {
    const res = await failing(t.engine.datasets, 'list', new Unavailable('the store is busy'), () => http.get('/v1/datasets'));
    expectStatus(res, 503);
    expect(res.body).toEqual({ detail: `the store is busy (request id ${res.headers['x-request-id']})` });
    const line = t.lines().find((l) => l.level === 'error' && l.request_id === res.headers['x-request-id']);
    expect(line).toMatchObject({ route: '/v1/datasets', status: 503, error: 'the store is busy' });
  });
});

describe("the framework's and Node's own refusals keep {detail}", () => {
  it("answers headers past Node's limit with 431 in the {detail} shape, and a malformed request with 400", async () => {
    const big = await rawRequest(t.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${long(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(big.headers['content-type']).toBe('application/json');
    expect(big.headers['x-request-id']).toMatch(/^req_/);
    expect(JSON.parse(big.body).detail).toMatch(/headers too large/);
    const bad = await rawRequest(t.url, 'NOT A REQUEST\r\n\r\n');
    expect(bad.status).toBe(400);
    expect(Object.keys(JSON.parse(bad.body))).toEqual(['detail']);
    expectStatus(await http.get('/healthz'), 200); // the server is fine
  });

  it('answers a path parameter past LIMITS.pathParam with 414 in the {detail} shape', async () => {
    const res = await http.get(`/v1/datasets/${long(LIMITS.pathParam + 1)}`);
    expectStatus(res, 414);
    expect(res.body).toEqual({ detail: `a path parameter is longer than ${LIMITS.pathParam} characters` });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('answers a path that is not valid percent-encoding with 400 in the {detail} shape', async () => {
    const res = await http.get('/v1/datasets/%zz%');
    expectStatus(res, 400);
    expect(Object.keys(res.body)).toEqual(['detail']);
  });

  it('answers 404 and 413 in the same shape', async () => {
    expect(await http.get('/v1/nothing')).toMatchObject({ status: 404, body: { detail: 'Not Found' } });
    const big = await http.call('POST', '/v1/admin/datasets', { body: long(LIMITS.bodyBytes + 1), contentType: 'application/json' });
    expectStatus(big, 413);
    expect(Object.keys(big.body)).toEqual(['detail']);
  });
});
