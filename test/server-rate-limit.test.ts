/**
 * Rate limits per credential (@fastify/rate-limit): a bearer token is one credential, a request
 * without one counts against its client address; past the limit, 429 with Retry-After in the
 * `{detail}` shape while other credentials go on; /healthz is never limited. Off unless
 * configured in buildApp; on by default in `svc serve` (SVC_RATE_LIMIT).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { rateLimitFromEnv, SERVE_RATE_LIMIT_PER_MINUTE } from '../src/server/rateLimit.js';
import { useApp } from './helpers/app.js';
import { init, serve, tempDir } from './helpers/cli.js';
import { client, expectStatus, until } from './helpers/http.js';

const LIMIT = 3;

describe('an app with a limit', () => {
  let other: string;
  const { t, http } = useApp({ rateLimit: { max: LIMIT, windowMs: 60_000 } });
  beforeAll(async () => {
    // minting counts against the admin's own session: one request of its budget
    other = expectStatus(await http.post('/v1/admin/api-keys', { name: 'other', role: 'member' }), 201).token;
  });

  it('answers the request past the limit from one token 429 with Retry-After, while another token still gets 200', async () => {
    for (let i = 1; i < LIMIT; i++) expectStatus(await http.get('/v1/datasets'), 200);
    const over = await http.get('/v1/datasets');
    expectStatus(over, 429);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.body).toEqual({ detail: expect.stringMatching(new RegExp(`^rate limit exceeded: at most ${LIMIT} requests per 60 s`)) });
    expect(over.headers['x-request-id']).toBeTruthy();
    expectStatus(await http.get('/v1/datasets', { token: other }), 200);
  });

  it('counts requests without a token by client address, and never limits /healthz', async () => {
    const anonymous = await Promise.all(Array.from({ length: LIMIT + 1 }, () => http.get('/v1/datasets', { token: null })));
    expect(anonymous.map((r) => r.status).sort()).toEqual([...Array(LIMIT).fill(401), 429]);
    for (let i = 0; i < 3 * LIMIT; i++) expectStatus(await http.get('/healthz', { token: null }), 200);
  });
});

describe('an app without a limit', () => {
  const { t, http } = useApp();

  it('limits nothing', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => http.get('/v1/datasets')));
    expect(answers.every((r) => r.status === 200 && r.headers['x-ratelimit-limit'] === undefined)).toBe(true);
  });
});

describe('SVC_RATE_LIMIT', () => {
  it('is requests per minute; 0 or off turns limiting off; unset takes the serve default', () => {
    expect(rateLimitFromEnv(undefined)).toEqual({ max: SERVE_RATE_LIMIT_PER_MINUTE, windowMs: 60_000 });
    expect(rateLimitFromEnv('')).toEqual({ max: SERVE_RATE_LIMIT_PER_MINUTE, windowMs: 60_000 });
    expect(rateLimitFromEnv('120')).toEqual({ max: 120, windowMs: 60_000 });
    expect(rateLimitFromEnv('0')).toBeUndefined();
    expect(rateLimitFromEnv(' OFF ')).toBeUndefined();
    for (const bad of ['-1', '1.5', 'lots', '10/s']) expect(() => rateLimitFromEnv(bad), bad).toThrow(/SVC_RATE_LIMIT/);
  });

  it('limits `svc serve`', async () => {
    const dir = tempDir('svc-rate-limit-');
    const admin = init(dir.path);
    process.env.SVC_RATE_LIMIT = '4';
    const server = await serve(dir.path).finally(() => delete process.env.SVC_RATE_LIMIT);
    try {
      const http = client(server.url, { token: admin.token, tenant: admin.tenant_id });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push((await http.get('/v1/datasets')).status);
      expect(answers).toEqual([200, 200, 200, 200, 429]);
      await until('the 429 in the access log', () => (server.logs().includes('"status":429') ? true : undefined), 5000);
    } finally {
      await server.stop();
      dir.remove();
    }
  });
});
