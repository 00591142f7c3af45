/**
 * The authorization matrix: every route the router registered × every kind of bad (and good)
 * credential, with the expected status derived from the route policy table (src/server/policy.ts)
 * and the spec's rules (spec/api-spec.md "Authentication", "Errors"). The route list comes from
 * `routesOf(app)` of the very app under test, so a newly added route is covered without editing
 * this file.
 *
 * One in-process server on loopback over a fresh data dir:
 * - tenant A from `svc init`, its admin session, a Member user with a session, tenant keys of A
 *   (admin, member, revoked, expired), platform keys of A (live, revoked);
 * - tenant P, provisioned by A's platform key, with data;
 * - tenant B, wholly separate with its own admin (added through the engine before serving), with
 *   data, a tenant key and a platform key.
 * Every response to a request that does not itself name one of B's (or P's) values is searched
 * for them: none may leak.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { buildApp, routesOf } from '../src/server/app.js';
import { POLICY, policyKey, type RoutePolicy } from '../src/server/policy.js';
import { init, tempDir } from './helpers/cli.js';
import { client, expectStatus, until, type Json, type Res } from './helpers/http.js';

// ---------------------------------------------------------------------------------------------
// HTTP

interface Req {
  method: string;
  path: string;
  /** bearer token; null: no Authorization header */
  token?: string | null;
  /** a raw Authorization header value (wins over token) */
  authorization?: string;
  /** tenant header; null: none */
  tenant?: string | null;
  json?: unknown;
  raw?: string;
  contentType?: string;
}

let baseUrl: string;

const http = client(() => baseUrl);

/** A raw Authorization value wins over the token. */
const call = (r: Req): Promise<Res> =>
  http.call(r.method, r.path, {
    json: r.json,
    body: r.raw,
    contentType: r.contentType,
    token: r.authorization === undefined ? r.token : null,
    tenant: r.tenant,
    headers: r.authorization === undefined ? undefined : { authorization: r.authorization },
  });

// ---------------------------------------------------------------------------------------------
// The world

const hex = () => randomBytes(5).toString('hex');
const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let app: FastifyInstance;

interface Tenant {
  id: string;
  name: string;
  /** a job of this tenant (its first ingest's), when the server has a jobs API */
  job?: string;
  /** the source of its first dataset */
  source?: number;
  /** dataset ids that belong to this tenant only */
  datasets: string[];
  /** a word in every record body of this tenant only */
  marker: string;
  run: string;
}

const A = {} as Tenant & {
  admin: string; adminUser: string; member: string; memberUser: string;
  adminKey: string; adminKeyId: number; memberKey: string; revokedKey: string; expiredKey: string;
  platKey: string; platKeyId: number; revokedPlatKey: string; sparePlatKey: string;
};
const B = {} as Tenant & { admin: string; adminUser: string; email: string; key: string; keyPrefix: string; platKey: string; platKeyPrefix: string };
const P = {} as Tenant;
let expiredJwt: string;
let foreignJwt: string;
let unknownUserJwt: string;
/** a dataset id both A and B have: each sees only its own records under it */
const COMMON = 'common';
const SHARED_WORD = 'alphaword';

async function mintKey(token: string, tenant: string, name: string, role: 'admin' | 'member', expiresAt?: string) {
  return expectStatus(await call({ method: 'POST', path: '/v1/admin/api-keys', token, tenant, json: { name, role, ...(expiresAt ? { expires_at: expiresAt } : {}) } }), 201, 'mint tenant key');
}
async function mintPlatformKey(token: string, tenant: string, name: string) {
  return expectStatus(await call({ method: 'POST', path: '/v1/admin/platform-keys', token, tenant, json: { name } }), 201, 'mint platform key');
}

/** Creates a dataset in `tenant` and streams `rows` into it; returns the ready run's id. */
async function datasetWith(token: string, tenant: string, datasetId: string, rows: unknown[]): Promise<string> {
  expectStatus(await call({ method: 'POST', path: '/v1/admin/datasets', token, tenant, json: { dataset_id: datasetId } }), 201, `create ${datasetId}`);
  const run = expectStatus(
    await call({ method: 'POST', path: `/v1/ingest/sources/${datasetId}/stream?format=ndjson`, token, tenant, raw: ndjson(rows), contentType: 'application/x-ndjson' }),
    202,
    `ingest ${datasetId}`,
  );
  const done = await until(`run ${run.ingest_run_id}`, async () => {
    const r = expectStatus(await call({ method: 'GET', path: `/v1/ingest/runs/${run.ingest_run_id}`, token, tenant }), 200);
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(done.status, JSON.stringify(done)).toBe('ready');
  return run.ingest_run_id;
}

const rowsOf = (marker: string, n = 3) =>
  Array.from({ length: n }, (_, i) => ({ id: `${marker}-${i}`, msg: `${SHARED_WORD} event ${i} ${marker} payload`, level: 'INFO' }));

let expiredKeyAt = 0;

beforeAll(async () => {
  dir = tempDir('svc-authz-');
  const a = init(dir.path);
  Object.assign(A, { id: a.tenant_id, name: 'default', admin: a.token, adminUser: a.user_id });

  // Tenant B: a wholly separate tenant with its own admin, in the same data dir.
  engine = await Engine.open(dir.path);
  B.name = `bravo-${hex()}`;
  B.email = `b-admin-${hex()}@example.test`;
  const b = await engine.directory.createTenant(B.name, B.email);
  B.id = b.tenant.tenant_id;
  B.adminUser = b.user.user_id;
  B.admin = await engine.sessions.issue(b.user.user_id, 3600);

  expiredJwt = await engine.sessions.issue(a.user_id, -10);
  unknownUserJwt = await engine.sessions.issue('usr_00000000000000000000000000', 3600);
  foreignJwt = await new SignJWT({ typ: 'session' }).setProtectedHeader({ alg: 'HS256' }).setSubject(a.user_id).setIssuer('svc').setIssuedAt().setExpirationTime('1h').sign(randomBytes(32));

  app = await buildApp(engine);
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });

  // Keys of A, the expiring one first so that it is past its expiry when the matrix runs.
  expiredKeyAt = Date.now() + 1500;
  A.expiredKey = (await mintKey(A.admin, A.id, 'expiring', 'admin', new Date(expiredKeyAt).toISOString())).token;
  const adminKey = await mintKey(A.admin, A.id, 'a-admin', 'admin');
  Object.assign(A, { adminKey: adminKey.token, adminKeyId: adminKey.id });
  A.memberKey = (await mintKey(A.admin, A.id, 'a-member', 'member')).token;
  const revoked = await mintKey(A.admin, A.id, 'a-revoked', 'admin');
  expectStatus(await call({ method: 'DELETE', path: `/v1/admin/api-keys/${revoked.id}`, token: A.admin, tenant: A.id }), 200, 'revoke');
  A.revokedKey = revoked.token;
  const plat = await mintPlatformKey(A.admin, A.id, 'a-platform');
  Object.assign(A, { platKey: plat.token, platKeyId: plat.id });
  const revokedPlat = await mintPlatformKey(A.admin, A.id, 'a-platform-revoked');
  expectStatus(await call({ method: 'DELETE', path: `/v1/admin/platform-keys/${revokedPlat.id}`, token: A.admin, tenant: A.id }), 200, 'revoke platform key');
  A.revokedPlatKey = revokedPlat.token;
  A.sparePlatKey = (await mintPlatformKey(A.admin, A.id, 'a-platform-spare')).token;

  // A Member of A with a console session.
  const member = expectStatus(await call({ method: 'POST', path: '/v1/admin/members', token: A.admin, tenant: A.id, json: { email: 'member-a@example.test', role: 'member' } }), 201);
  A.memberUser = member.user_id;
  A.member = await engine.sessions.issue(member.user_id, 3600);

  // Data of A.
  A.marker = `amark${hex()}`;
  A.datasets = ['a-logs'];
  A.run = await datasetWith(A.admin, A.id, 'a-logs', rowsOf(A.marker));
  await datasetWith(A.admin, A.id, COMMON, rowsOf(A.marker, 2));

  // Tenant P, provisioned by A's platform key, with data.
  const p = expectStatus(await call({ method: 'POST', path: '/v1/platform/tenants', token: A.platKey, json: { name: `papa-${hex()}` } }), 201);
  Object.assign(P, { id: p.tenant_id, name: p.name, marker: `pmark${hex()}`, datasets: [`p-only-${hex()}`] });
  P.run = await datasetWith(A.platKey, P.id, P.datasets[0], rowsOf(P.marker));

  // Data and keys of B.
  B.marker = `bmark${hex()}`;
  B.datasets = [`b-only-${hex()}`];
  B.run = await datasetWith(B.admin, B.id, B.datasets[0], rowsOf(B.marker));
  await datasetWith(B.admin, B.id, COMMON, rowsOf(B.marker, 4));
  const bKey = await mintKey(B.admin, B.id, 'b-admin', 'admin');
  Object.assign(B, { key: bKey.token, keyPrefix: bKey.prefix });
  const bPlat = await mintPlatformKey(B.admin, B.id, 'b-platform');
  B.platKey = bPlat.token;
  B.platKeyPrefix = bPlat.token.split('.').slice(0, 3).join('.');

  // the source of each tenant's first dataset
  for (const [t, token] of [[A, A.admin], [B, B.admin], [P, A.platKey]] as const) {
    t.source = expectStatus(await call({ method: 'GET', path: `/v1/datasets/${t.datasets[0]}`, token, tenant: t.id }), 200).sources[0];
  }
  // a job id of each tenant, where the router has a jobs list
  for (const [t, token] of [[A, A.admin], [B, B.admin], [P, A.platKey]] as const) {
    const res = await call({ method: 'GET', path: '/v1/admin/jobs', token, tenant: t.id });
    if (res.status === 200 && Array.isArray(res.body?.jobs) && res.body.jobs.length > 0) t.job = res.body.jobs[0].job_id;
  }

  await sleep(Math.max(0, expiredKeyAt - Date.now()) + 100);
});

afterAll(async () => {
  await app?.close();
  await engine?.close();
  dir?.remove();
});

// ---------------------------------------------------------------------------------------------
// Requests per route

interface Route { method: string; url: string; policy: RoutePolicy }

let seq = 0;
const next = () => `${++seq}-${hex()}`;

/** Path parameters: existing objects of tenant A (or of P, for a request acting in P). */
function paramsOf(route: Route, t: Tenant = A): Record<string, string> {
  return {
    dataset_id: t.datasets[0],
    source_key: t.datasets[0],
    ingest_run_id: t.run,
    job_id: t.job ?? 'job_00000000000000000000000000',
    source_id: String(t.source ?? 1),
    upload_session_id: 'upl_00000000000000000000000000',
    part_number: '1',
    id: String(route.url.includes('platform-keys') ? A.platKeyId : A.adminKeyId),
    tenant_id: P.id,
  };
}

/** Datasets made only to hold a fresh source: deleted after the call (a dataset without its source is covered on its own below). */
const scratch: string[] = [];
async function dropScratch() {
  for (const id of scratch.splice(0)) await call({ method: 'DELETE', path: `/v1/admin/datasets/${id}`, token: A.admin, tenant: A.id });
}

/** Fresh objects for routes that delete what their path names (the positive row must not eat the fixtures). */
async function freshParams(route: Route): Promise<Record<string, string>> {
  const out = paramsOf(route);
  const names = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
  for (const name of names) {
    if (name === 'dataset_id') {
      const id = `tmp-${next()}`;
      expectStatus(await call({ method: 'POST', path: '/v1/admin/datasets', token: A.admin, tenant: A.id, json: { dataset_id: id } }), 201);
      out.dataset_id = id;
    } else if (name === 'id') {
      out.id = String(route.url.includes('platform-keys') ? (await mintPlatformKey(A.admin, A.id, `tmp-${next()}`)).id : (await mintKey(A.admin, A.id, `tmp-${next()}`, 'member')).id);
    } else if (name === 'source_id') {
      const id = `tmp-${next()}`;
      out.source_id = String(expectStatus(await call({ method: 'POST', path: '/v1/admin/datasets', token: A.admin, tenant: A.id, json: { dataset_id: id } }), 201).sources[0]);
      scratch.push(id);
    } else if (name === 'tenant_id') {
      out.tenant_id = expectStatus(await call({ method: 'POST', path: '/v1/platform/tenants', token: A.platKey, json: { name: `tmp-${next()}` } }), 201).tenant_id;
    }
  }
  return out;
}

const fill = (url: string, params: Record<string, string>) => url.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(params[name] ?? 'x'));

/** A valid minimal body (and query) per route, so that authorization, not validation, decides. */
function bodyOf(route: Route): Pick<Req, 'json' | 'raw' | 'contentType'> & { query?: string } {
  switch (policyKey(route.method, route.url)) {
    case 'POST /v1/admin/members': return { json: { email: `m-${next()}@example.test`, role: 'member' } };
    case 'POST /v1/admin/api-keys': return { json: { name: `k-${next()}`, role: 'member' } };
    case 'POST /v1/admin/platform-keys': return { json: { name: `pk-${next()}` } };
    case 'POST /v1/platform/tenants': return { json: { name: `t-${next()}` } };
    case 'POST /v1/platform/keys': return {};
    case 'POST /v1/admin/datasets': return { json: { dataset_id: `ds-${next()}` } };
    case 'POST /v1/search': return { json: { text: SHARED_WORD } };
    case 'POST /v1/ingest/sources/:source_key/uploads': return { json: { filename: 'x.ndjson' } };
    case 'POST /v1/ingest/sources/:source_key/uploads/parts': return { json: { upload_session_id: 'upl_x', part_numbers: [1] } };
    case 'POST /v1/ingest/sources/:source_key/uploads/complete': return { json: { upload_session_id: 'upl_x', parts: [{ etag: 'x', part_number: 1 }] } };
    case 'POST /v1/ingest/sources/:source_key/uploads/abort': return { json: { upload_session_id: 'upl_x' } };
    case 'DELETE /v1/admin/objects': return { query: '?source_id=1&key=x' };
    case 'POST /v1/ingest/sources/:source_key/stream':
      return { raw: ndjson([{ id: `extra-${next()}`, msg: `${SHARED_WORD} ${A.marker}` }]), contentType: 'application/x-ndjson', query: '?format=ndjson' };
  }
  return route.method === 'GET' || route.method === 'DELETE' ? {} : { json: {} };
}

/** The success status of the routes known today (others: anything but 400/401/403 and 5xx). */
const SUCCESS: Record<string, number> = {
  'POST /v1/admin/members': 201,
  'POST /v1/admin/api-keys': 201,
  'POST /v1/admin/platform-keys': 201,
  'POST /v1/platform/keys': 201,
  'POST /v1/platform/tenants': 201,
  'POST /v1/admin/datasets': 201,
  'POST /v1/ingest/sources/:source_key/stream': 202,
  // a tenant's data goes in the background, as every deletion's does
  'DELETE /v1/platform/tenants/:tenant_id': 202,
};
/** deletions that may answer 202 with a job instead of 200 */
const ASYNC_OK = new Set(['DELETE /v1/admin/datasets/:dataset_id']);

const KNOWN_200 = new Set([
  'GET /healthz', 'GET /openapi.json', 'GET /v1/me', 'GET /v1/admin/members', 'GET /v1/admin/api-keys', 'DELETE /v1/admin/api-keys/:id',
  'GET /v1/admin/platform-keys', 'DELETE /v1/admin/platform-keys/:id', 'GET /v1/platform/tenants',
  'GET /v1/datasets', 'GET /v1/datasets/:dataset_id', 'DELETE /v1/admin/datasets/:dataset_id', 'GET /v1/admin/fields', 'POST /v1/search',
  'GET /v1/ingest/runs/:ingest_run_id', 'GET /v1/ingest/runs',
]);

function requestFor(route: Route, cred: Cred, params = paramsOf(route)): Req {
  const { query, ...body } = bodyOf(route);
  return { method: route.method, path: fill(route.url, params) + (query ?? ''), ...cred, ...body };
}

// ---------------------------------------------------------------------------------------------
// Credentials and the expected outcome per policy

interface Cred { token?: string | null; authorization?: string; tenant?: string | null }
/** ok: passed authorization (not 400/401/403, not 5xx); public: not 401 (an `auth: none` route, e.g. a signed URL, may still say 403) */
type Outcome = number | 'ok' | 'public' | number[] | 'skip';

/** tenant credentials and the tenant header decide (auth `ingest` also takes a source's ingest token) */
const isTenant = (p: RoutePolicy) => (p.auth as string) === 'tenant' || (p.auth as string) === 'ingest';

interface Row {
  name: string;
  cred: () => Cred;
  expect: (p: RoutePolicy, route: Route) => Outcome;
  /** the credential is B's own (B acting as B on /v1/me): its answer may name B */
  ownedByB?: (p: RoutePolicy) => boolean;
}

/** any status but 401 for `auth: none` routes */
const publicOk = (p: RoutePolicy): Outcome | null => (p.auth === 'none' ? 'public' : null);
const unauth = (p: RoutePolicy): Outcome => publicOk(p) ?? 401;

const ROWS: Row[] = [
  { name: 'no token', cred: () => ({ token: null, tenant: A.id }), expect: unauth },
  { name: 'no token, no tenant header (401 before 400)', cred: () => ({ token: null, tenant: null }), expect: unauth },
  { name: 'malformed Bearer x.y.z', cred: () => ({ token: 'x.y.z', tenant: A.id }), expect: unauth },
  { name: 'Basic scheme', cred: () => ({ authorization: 'Basic abc', tenant: A.id }), expect: unauth },
  { name: 'empty Bearer', cred: () => ({ authorization: 'Bearer ', tenant: A.id }), expect: unauth },
  { name: 'token without scheme', cred: () => ({ authorization: A.admin, tenant: A.id }), expect: unauth },
  { name: 'expired JWT', cred: () => ({ token: expiredJwt, tenant: A.id }), expect: unauth },
  { name: 'JWT signed with another secret', cred: () => ({ token: foreignJwt, tenant: A.id }), expect: unauth },
  { name: 'JWT of an unknown user', cred: () => ({ token: unknownUserJwt, tenant: A.id }), expect: unauth },
  { name: 'revoked tenant key', cred: () => ({ token: A.revokedKey, tenant: A.id }), expect: unauth },
  { name: 'revoked platform key', cred: () => ({ token: A.revokedPlatKey, tenant: A.id }), expect: unauth },
  { name: 'expired tenant key', cred: () => ({ token: A.expiredKey, tenant: A.id }), expect: unauth },
  { name: 'tenant key with a wrong secret', cred: () => ({ token: A.adminKey.replace(/\.[^.]+$/, `.${randomBytes(32).toString('base64url')}`), tenant: A.id }), expect: unauth },
  { name: 'tenant key with an extra segment', cred: () => ({ token: `${A.adminKey}.extra`, tenant: A.id }), expect: unauth },
  // its own key: were it let through, POST /v1/platform/keys would revoke it
  { name: 'platform key with an extra segment', cred: () => ({ token: `${A.sparePlatKey}.extra`, tenant: A.id }), expect: unauth },
  { name: 'tenant key presented as a platform key', cred: () => ({ token: A.adminKey.replace(/^svctk\./, 'svcpk.'), tenant: A.id }), expect: unauth },
  { name: 'bare key prefix', cred: () => ({ token: 'svctk.v1.', tenant: A.id }), expect: unauth },

  {
    name: 'admin session without the tenant header',
    cred: () => ({ token: A.admin, tenant: null }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 400 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'member session without the tenant header',
    cred: () => ({ token: A.member, tenant: null }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 400 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'admin tenant key without the tenant header',
    cred: () => ({ token: A.adminKey, tenant: null }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 400 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'tenant key of B acting on A',
    cred: () => ({ token: B.key, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'user' ? 'ok' : 403),
    ownedByB: (p) => p.auth === 'user',
  },
  {
    name: 'admin session of B acting on A',
    cred: () => ({ token: B.admin, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'user' ? 'ok' : 403),
    ownedByB: (p) => p.auth === 'user',
  },
  {
    name: 'admin session of A acting on a tenant that does not exist',
    cred: () => ({ token: A.admin, tenant: 'ten_00000000000000000000000000' }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'admin session of A acting on P (provisioned by A, no membership)',
    cred: () => ({ token: A.admin, tenant: P.id }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'admin tenant key of A acting on P',
    cred: () => ({ token: A.adminKey, tenant: P.id }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'platform' ? 403 : 'ok'),
  },
  {
    name: 'member session on A',
    cred: () => ({ token: A.member, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'platform' ? 403 : p.auth === 'user' ? 'ok' : p.role === 'admin' ? 403 : 'ok'),
  },
  {
    name: 'member tenant key on A',
    cred: () => ({ token: A.memberKey, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'platform' ? 403 : p.auth === 'user' ? 'ok' : p.role === 'admin' || p.session ? 403 : 'ok'),
  },
  {
    name: 'platform key of A on B (not provisioned by A)',
    cred: () => ({ token: A.platKey, tenant: B.id }),
    // on /v1/platform/* the header is not read: those rows are the positive row's business
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'user' ? 'ok' : 'skip'),
  },
  {
    name: 'platform key of B on P (provisioned by A)',
    cred: () => ({ token: B.platKey, tenant: P.id }),
    expect: (p, route) =>
      publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'user' ? 'ok' : route.url.includes(':tenant_id') ? [403, 404] : 'skip'),
    ownedByB: (p) => p.auth === 'user',
  },
  {
    name: 'platform key of B on A',
    cred: () => ({ token: B.platKey, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (isTenant(p) ? 403 : p.auth === 'user' ? 'ok' : 'skip'),
    ownedByB: (p) => p.auth === 'user',
  },
  {
    name: 'admin tenant key of A (an API key)',
    cred: () => ({ token: A.adminKey, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'platform' ? 403 : p.session ? 403 : 'ok'),
  },
  {
    name: 'platform key of A acting in A (an API key)',
    cred: () => ({ token: A.platKey, tenant: A.id }),
    // on /v1/platform/* a platform key is the right credential: the positive row
    expect: (p) => publicOk(p) ?? (p.auth === 'platform' ? 'skip' : p.session ? 403 : 'ok'),
  },
  {
    name: 'admin session of A',
    cred: () => ({ token: A.admin, tenant: A.id }),
    expect: (p) => publicOk(p) ?? (p.auth === 'platform' ? 403 : 'skip'),
  },
];

// ---------------------------------------------------------------------------------------------
// Leak check: values of B (and of P) in an answer to a request that did not name them

function markers(): { label: string; value: string }[] {
  return [
    { label: "B's tenant id", value: B.id },
    { label: "B's tenant name", value: B.name },
    { label: "B's admin e-mail", value: B.email },
    { label: "B's admin user id", value: B.adminUser },
    { label: "B's record marker", value: B.marker },
    { label: "B's run id", value: B.run },
    ...(B.job ? [{ label: "B's job id", value: B.job }] : []),
    { label: "B's tenant key prefix", value: B.keyPrefix },
    { label: "B's platform key prefix", value: B.platKeyPrefix },
    ...B.datasets.map((d) => ({ label: "B's dataset id", value: d })),
    { label: "P's record marker", value: P.marker },
    { label: "P's run id", value: P.run },
    ...P.datasets.map((d) => ({ label: "P's dataset id", value: d })),
  ];
}

function expectNoLeak(req: Req, res: Res, where: string) {
  const asked = [req.path, req.token ?? '', req.authorization ?? '', req.tenant ?? '', req.raw ?? '', JSON.stringify(req.json ?? null)].join('\n');
  for (const { label, value } of markers()) {
    if (asked.includes(value)) continue;
    if (req.tenant === P.id && label.startsWith("P's")) continue;
    expect.soft(res.text.includes(value), `${where}: the answer holds ${label} (${value}): ${res.text.slice(0, 400)}`).toBe(false);
  }
}

function check(outcome: Outcome, res: Res, where: string) {
  // soft: one run reports every route that answers wrongly, not only the first
  const msg = `${where} → HTTP ${res.status}: ${res.text.slice(0, 300)}`;
  if (outcome === 'public') {
    expect.soft(res.status, msg).not.toBe(401);
    expect.soft(res.status, msg).toBeLessThan(500);
  } else if (outcome === 'ok') {
    expect.soft([400, 401, 403], msg).not.toContain(res.status);
    expect.soft(res.status, msg).toBeLessThan(500);
  } else if (Array.isArray(outcome)) {
    expect.soft(outcome, msg).toContain(res.status);
  } else {
    expect.soft(res.status, msg).toBe(outcome);
  }
  if (typeof outcome === 'number' && outcome >= 400 && res.status === outcome) {
    // ApiError: a string detail (or {code, message})
    expect.soft(res.body?.detail, msg).toBeDefined();
  }
}

// ---------------------------------------------------------------------------------------------

const routes = (): Route[] => routesOf(app).map((r) => ({ ...r, policy: POLICY[policyKey(r.method, r.url)] }));
/**
 * The routes the matrices call. The console's own session routes are left to
 * test/console-session.test.ts: they stand for the session that calls them (DELETE signs it out,
 * which would end the sessions every row here shares).
 */
const matrixRoutes = (): Route[] => routes().filter((r) => !(r.url === '/v1/console/session' && r.policy.auth === 'user'));

describe('the route list and the policy table', () => {
  it('the router registered routes, each with a policy entry, and every policy entry is a registered route', () => {
    const list = routes();
    expect(list.length).toBeGreaterThan(10);
    for (const r of list) expect(r.policy, `${r.method} ${r.url}`).toBeDefined();
    const registered = new Set(list.map((r) => policyKey(r.method, r.url)));
    expect(Object.keys(POLICY).filter((k) => !registered.has(k)).join(', '), 'policy entries without a route').toBe('');
    for (const known of ['GET /v1/me', 'POST /v1/admin/api-keys', 'POST /v1/platform/tenants', 'POST /v1/search', 'POST /v1/ingest/sources/:source_key/stream']) {
      expect(registered.has(known), known).toBe(true);
    }
  });

  it('the table follows the spec: public health, user /v1/me, platform /v1/platform/*, tenant elsewhere; admin to change; session to mint keys', () => {
    for (const { method, url, policy: p } of routes()) {
      const key = `${method} ${url}`;
      if (url === '/healthz' || url === '/openapi.json') expect(p.auth, key).toBe('none');
      else if (url === '/v1/me' || url === '/v1/console/session') expect(p.auth, key).toBe(method === 'POST' ? 'none' : 'user');
      else if (url.startsWith('/v1/platform/')) expect(p.auth, key).toBe('platform');
      else if (p.auth === 'none') {
        // only a route that carries its own proof (a signed URL) may do without a token
        expect(url, key).not.toMatch(/^\/v1\/(admin|platform|me|datasets|search|sql|ingest\/runs)\b/);
      } else if ((p.auth as string) === 'ingest') expect(url, key).toMatch(/^\/v1\/ingest\/sources\//);
      else expect(p.auth, key).toBe('tenant');
      if (isTenant(p)) {
        expect(['member', 'admin'], key).toContain(p.role);
        if (method === 'DELETE' || method === 'PUT' || method === 'PATCH' || (method === 'POST' && url.startsWith('/v1/admin/'))) expect(p.role, key).toBe('admin');
      }
      if (method === 'POST' && /^\/v1\/admin\/(api|platform)-keys$/.test(url)) expect(p, key).toMatchObject({ auth: 'tenant', role: 'admin', session: true });
    }
  });
});

describe('the authorization matrix', () => {
  for (const row of ROWS) {
    it(`${row.name}: every route answers as the policy says, and nothing of B leaks`, async () => {
      const cred = row.cred();
      let checked = 0;
      for (const route of matrixRoutes()) {
        const outcome = row.expect(route.policy, route);
        if (outcome === 'skip') continue;
        // DELETE routes target objects made for the one call: a request let through by mistake
        // then destroys nothing the other rows rely on
        const req = requestFor(route, cred, route.method === 'DELETE' ? await freshParams(route) : paramsOf(route));
        const res = await call(req);
        await dropScratch();
        const where = `[${row.name}] ${route.method} ${route.url}`;
        check(outcome, res, where);
        if (!row.ownedByB?.(route.policy)) expectNoLeak(req, res, where);
        if (route.policy.auth === 'none') expect.soft(res.status, where).not.toBe(401);
        checked++;
      }
      expect(checked).toBeGreaterThan(0);
    });
  }
});

describe('the positive row: the right credential passes on every route', () => {
  /** The credentials a policy admits, all of tenant A. */
  function rightCreds(p: RoutePolicy): { name: string; cred: () => Promise<Cred>; in?: Tenant }[] {
    if (p.auth === 'none') return [{ name: 'no token', cred: async () => ({ token: null, tenant: null }) }];
    if (p.auth === 'user') {
      return [
        { name: 'admin session', cred: async () => ({ token: A.admin, tenant: null }) },
        { name: 'member session', cred: async () => ({ token: A.member, tenant: null }) },
        { name: 'tenant key', cred: async () => ({ token: A.memberKey, tenant: null }) },
        { name: 'platform key', cred: async () => ({ token: A.platKey, tenant: null }) },
      ];
    }
    if (p.auth === 'platform') {
      // a fresh platform key of A for each call: POST /v1/platform/keys revokes the calling key
      return [{ name: 'platform key', cred: async () => ({ token: (await mintPlatformKey(A.admin, A.id, `fresh-${next()}`)).token, tenant: null }) }];
    }
    const out: { name: string; cred: () => Promise<Cred>; in?: Tenant }[] = [{ name: 'admin session', cred: async () => ({ token: A.admin, tenant: A.id }) }];
    if (!p.session) {
      out.push({ name: 'admin tenant key', cred: async () => ({ token: A.adminKey, tenant: A.id }) });
      out.push({ name: 'platform key of A in A', cred: async () => ({ token: A.platKey, tenant: A.id }) });
      out.push({ name: 'platform key of A in P (provisioned by A)', cred: async () => ({ token: A.platKey, tenant: P.id }), in: P });
    }
    if (p.role !== 'admin' && !p.session) {
      out.push({ name: 'member session', cred: async () => ({ token: A.member, tenant: A.id }) });
      out.push({ name: 'member tenant key', cred: async () => ({ token: A.memberKey, tenant: A.id }) });
    }
    return out;
  }

  it('every route, with each credential its policy admits, answers its success status (no 400/401/403/5xx)', async () => {
    let checked = 0;
    for (const route of matrixRoutes()) {
      for (const { name, cred, in: tenant } of rightCreds(route.policy)) {
        // deleting in P would need objects of P that only a console session can make (keys): A covers DELETE
        if (tenant === P && route.method === 'DELETE') continue;
        const params = route.method === 'DELETE' ? await freshParams(route) : paramsOf(route, tenant);
        const req = requestFor(route, await cred(), params);
        const res = await call(req);
        await dropScratch();
        const where = `[positive: ${name}] ${route.method} ${route.url}`;
        check(route.policy.auth === 'none' ? 'public' : 'ok', res, where);
        // routes known to this file get their exact success status; unknown ones only the check above
        const key = policyKey(route.method, route.url);
        const want = SUCCESS[key] ?? (KNOWN_200.has(key) ? 200 : undefined);
        if (want !== undefined) expect.soft(ASYNC_OK.has(key) ? [200, 202] : [want], `${where}: ${res.text.slice(0, 300)}`).toContain(res.status);
        expectNoLeak(req, res, where);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});


describe('side effects of the routes the matrix calls', () => {
  it("deleting a dataset's source leaves the tenant searchable (no 5xx on a search over all datasets)", async () => {
    const id = `srcless-${next()}`;
    const ds = expectStatus(await call({ method: 'POST', path: '/v1/admin/datasets', token: A.admin, tenant: A.id, json: { dataset_id: id } }), 201);
    try {
      const del = await call({ method: 'DELETE', path: `/v1/admin/sources/${ds.sources[0]}`, token: A.admin, tenant: A.id });
      const job = expectStatus(del, 202);
      await until('the source deletion job', async () => {
        const polled = (await call({ method: 'GET', path: `/v1/admin/data-deletion-jobs/${job.job_id}`, token: A.admin, tenant: A.id })).body;
        return polled.status === 'succeeded' || undefined;
      });
      const res = await call({ method: 'POST', path: '/v1/search', token: A.admin, tenant: A.id, json: { text: SHARED_WORD } });
      expect(res.status, `POST /v1/search after DELETE /v1/admin/sources/${ds.sources[0]}: ${res.text.slice(0, 300)}`).toBe(200);
    } finally {
      await call({ method: 'DELETE', path: `/v1/admin/datasets/${id}`, token: A.admin, tenant: A.id });
    }
  });
});

describe("guessing another tenant's ids", () => {
  const asA = (method: string, path: string, extra: Partial<Req> = {}) => call({ method, path, token: A.admin, tenant: A.id, ...extra });

  it("B's dataset id as A → 403/404 on every dataset route, and B's dataset is intact", async () => {
    const bds = B.datasets[0];
    for (const res of [
      await asA('GET', `/v1/datasets/${bds}`),
      await asA('DELETE', `/v1/admin/datasets/${bds}`),
      await asA('POST', `/v1/search`, { json: { text: SHARED_WORD, datasets: [bds] } }),
      await asA('POST', `/v1/search`, { json: { text: '', datasets: [bds], dataset_scope: 'selected' } }),
      await asA('GET', `/v1/admin/fields?dataset_id=${bds}`),
      await asA('POST', `/v1/ingest/sources/${bds}/stream?format=ndjson`, { raw: ndjson([{ id: 'x', msg: 'planted by A' }]), contentType: 'application/x-ndjson' }),
    ]) {
      expect([403, 404], res.text).toContain(res.status);
      expect(res.text).not.toContain(B.marker);
      expect(res.text).not.toContain(B.id);
    }
    // runs filtered by B's dataset: an empty list, as for a dataset that does not exist
    const runs = await asA('GET', `/v1/ingest/runs?dataset_id=${bds}`);
    expect(expectStatus(runs, 200).runs).toEqual([]);
    expect(runs.text).not.toContain(B.run);
    // B still has its dataset, its records, and nothing planted by A
    const ds = expectStatus(await call({ method: 'GET', path: `/v1/datasets/${bds}`, token: B.admin, tenant: B.id }), 200);
    expect(ds.record_count).toBe(3);
    const found = expectStatus(await call({ method: 'POST', path: '/v1/search', token: B.admin, tenant: B.id, json: { text: 'planted' } }), 200);
    expect(found.records).toEqual([]);
  });

  it("every route whose path names objects, given B's ids as A → 403/404, never B's object; B's objects stay intact", async () => {
    const bIds: Record<string, string | undefined> = {
      dataset_id: B.datasets[0], source_key: B.datasets[0], ingest_run_id: B.run, job_id: B.job, tenant_id: B.id,
    };
    let checked = 0;
    for (const route of routes()) {
      const names = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
      if (names.length === 0 || route.policy.auth === 'none' || route.policy.auth === 'user') continue;
      if (!names.every((n) => bIds[n] !== undefined)) continue; // e.g. key ids: numbers per tenant, checked below
      const cred: Cred = route.policy.auth === 'platform' ? { token: A.platKey, tenant: null } : { token: A.admin, tenant: A.id };
      const req = requestFor(route, cred, bIds as Record<string, string>);
      const res = await call(req);
      const where = `[B's ids as A] ${route.method} ${route.url}`;
      expect.soft([403, 404], `${where} → HTTP ${res.status}: ${res.text.slice(0, 300)}`).toContain(res.status);
      for (const v of [B.marker, B.name, B.email, B.keyPrefix]) expect.soft(res.text.includes(v), `${where}: ${res.text.slice(0, 300)}`).toBe(false);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(5);
    // B is whole
    const ds = expectStatus(await call({ method: 'GET', path: `/v1/datasets/${B.datasets[0]}`, token: B.admin, tenant: B.id }), 200);
    expect(ds.record_count).toBe(3);
    expect(expectStatus(await call({ method: 'GET', path: `/v1/ingest/runs/${B.run}`, token: B.admin, tenant: B.id }), 200).status).toBe('ready');
    if (B.job) expectStatus(await call({ method: 'GET', path: `/v1/admin/jobs/${B.job}`, token: B.admin, tenant: B.id }), 200);
    expectStatus(await call({ method: 'GET', path: '/v1/datasets', token: B.key, tenant: B.id }), 200);
  });

  it("B's detection and query endpoint as A → 404, and A's rule cannot name B's dataset", async () => {
    const asB = (method: string, path: string, json?: unknown) => call({ method, path, token: B.admin, tenant: B.id, json });
    const rule = { name: 'b rule', severity: 'low', datasets: [B.datasets[0]], query: { search_request: { q: SHARED_WORD } }, trigger: { on_ingest: true } };
    const det = expectStatus(await asB('POST', '/v1/admin/detections', rule), 201);
    const ep = expectStatus(await asB('POST', '/v1/admin/query-endpoints', { name: `b-ep-${next()}`, search_request: { q: SHARED_WORD } }), 201);
    try {
      for (const [method, path, json] of [
        ['GET', `/v1/admin/detections/${det.detection_id}`],
        ['PUT', `/v1/admin/detections/${det.detection_id}`, { ...rule, datasets: A.datasets }],
        ['DELETE', `/v1/admin/detections/${det.detection_id}`],
        ['POST', `/v1/admin/detections/${det.detection_id}/test`, {}],
        ['GET', `/v1/detections/${det.detection_id}/hits`],
        ['GET', `/v1/admin/query-endpoints/${ep.name}`],
        ['GET', `/v1/query-endpoints/${ep.name}`],
        ['DELETE', `/v1/admin/query-endpoints/${ep.name}`],
      ] as [string, string, unknown?][]) {
        const res = await asA(method, path, json === undefined ? {} : { json });
        expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(404);
        expect(res.text).not.toContain(B.id);
      }
      const named = await asA('POST', '/v1/admin/detections', { json: rule });
      expect(named.status, named.text).toBe(422);
      expect(named.body.detail[0].loc).toEqual(['body', 'datasets', 0]);
      expect(expectStatus(await asB('GET', `/v1/admin/detections/${det.detection_id}`), 200).name).toBe('b rule');
    } finally {
      await asB('DELETE', `/v1/admin/detections/${det.detection_id}`);
      await asB('DELETE', `/v1/admin/query-endpoints/${ep.name}`);
    }
  });

  it("B's connector source as A → 404, its credentials never shown; A's source of the same id is A's own", async () => {
    const asB = (method: string, path: string, json?: unknown) => call({ method, path, token: B.admin, tenant: B.id, json });
    const secret = `b-secret-${next()}`;
    const body = {
      dataset_id: B.datasets[0], source_key: `b-conn-${next()}`, name: 'b conn', source_type: 'connector', connector_id: 'http',
      connector_config: { url: 'http://127.0.0.1:9/b' }, connector_credentials: { bearer_token: secret },
    };
    const path = '/v1/admin/connector-sources/77';
    expectStatus(await asB('PUT', path, body), 200);
    try {
      for (const [method, p] of [['GET', path], ['POST', `${path}/sync`], ['POST', `${path}/connection`], ['GET', `${path}/syncs`]]) {
        const res = await asA(method, p, method === 'POST' && p.endsWith('connection') ? { json: { sync_catalog: { streams: [] } } } : {});
        expect(res.status, `${method} ${p}: ${res.text.slice(0, 200)}`).toBe(404);
        expect(res.text).not.toContain(B.id);
      }
      const mine = expectStatus(await asA('PUT', path, { json: { ...body, dataset_id: A.datasets[0], source_key: `a-conn-${next()}`, connector_credentials: undefined } }), 200);
      expect(mine.tenant_id).toBe(A.id);
      const theirs = expectStatus(await asB('GET', path), 200);
      expect(theirs.integration).toMatchObject({ credential_status: 'configured', integration_destination_id: B.datasets[0] });
      expect(JSON.stringify(theirs)).not.toContain(secret);
    } finally {
      await asB('DELETE', '/v1/admin/sources/77');
      await asA('DELETE', '/v1/admin/sources/77');
    }
  });

  it("B's run id as A → 403/404", async () => {
    const res = await asA('GET', `/v1/ingest/runs/${B.run}`);
    expect([403, 404], res.text).toContain(res.status);
    expect(res.text).not.toContain(B.datasets[0]);
    expect(res.text).not.toContain(B.id);
  });

  it("the same dataset id in A and B: each tenant sees only its own records under it", async () => {
    const a = expectStatus(await asA('GET', `/v1/datasets/${COMMON}`), 200);
    expect(a).toMatchObject({ tenant_id: A.id, record_count: 2 });
    const env = expectStatus(await asA('POST', '/v1/search', { json: { text: SHARED_WORD, datasets: [COMMON], limit: 100 } }), 200);
    expect(env.records.length).toBe(2);
    for (const r of env.records) expect(r.provenance.tenant_id).toBe(A.id);
    expect(JSON.stringify(env)).not.toContain(B.marker);
    const all = expectStatus(await asA('POST', '/v1/search', { json: { text: SHARED_WORD, limit: 1000 } }), 200);
    expect(all.records.length).toBeGreaterThan(0);
    for (const r of all.records) expect(r.provenance.tenant_id).toBe(A.id);
    const b = expectStatus(await call({ method: 'GET', path: `/v1/datasets/${COMMON}`, token: B.admin, tenant: B.id }), 200);
    expect(b).toMatchObject({ tenant_id: B.id, record_count: 4 });
  });

  it("B's search cursor as A → 4xx, never B's records", async () => {
    const first = expectStatus(await call({ method: 'POST', path: '/v1/search', token: B.admin, tenant: B.id, json: { text: SHARED_WORD, limit: 1 } }), 200);
    expect(first.next_cursor).toEqual(expect.any(String));
    const res = await asA('POST', '/v1/search', { json: { cursor: first.next_cursor } });
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
    expect(res.text).not.toContain(B.marker);
  });

  it("B's tenant key id as A → 404 when A has no such id; the same number in A is A's own key; B's key keeps working", async () => {
    const aKeys = expectStatus(await asA('GET', '/v1/admin/api-keys'), 200).api_keys as Json[];
    const aMax = Math.max(...aKeys.map((k) => k.id));
    // mint B keys until B holds an id A does not have
    let bKey: Json;
    do bKey = await mintKey(B.admin, B.id, `b-extra-${next()}`, 'member');
    while (bKey.id <= aMax);
    const res = await asA('DELETE', `/v1/admin/api-keys/${bKey.id}`);
    expect([403, 404], res.text).toContain(res.status);
    expect(res.text).not.toContain(bKey.prefix);
    expectStatus(await call({ method: 'GET', path: '/v1/datasets', token: bKey.token, tenant: B.id }), 200, 'B key after A guessed its id');

    // a number both have: A's DELETE acts on A's key only
    const bFirst = B.keyPrefix;
    const bList = expectStatus(await call({ method: 'GET', path: '/v1/admin/api-keys', token: B.admin, tenant: B.id }), 200).api_keys as Json[];
    const bKeyOne = bList.find((k) => k.prefix === bFirst)!;
    const aSame = aKeys.find((k) => k.id === bKeyOne.id);
    expect(aSame, 'A has a key with the same number').toBeDefined();
    const revoked = expectStatus(await asA('DELETE', `/v1/admin/api-keys/${bKeyOne.id}`), 200);
    expect(revoked.prefix).toBe(aSame.prefix);
    expect(revoked.prefix).not.toBe(bFirst);
    expectStatus(await call({ method: 'GET', path: '/v1/datasets', token: B.key, tenant: B.id }), 200, "B's key after A revoked its own key of the same number");
  });

  it("B's platform key id as A → 404 when A has no such id; B's platform key keeps working", async () => {
    const aKeys = expectStatus(await asA('GET', '/v1/admin/platform-keys'), 200).platform_keys as Json[];
    const aMax = Math.max(...aKeys.map((k) => k.id));
    let bKey: Json;
    do bKey = await mintPlatformKey(B.admin, B.id, `b-plat-${next()}`);
    while (bKey.id <= aMax);
    const res = await asA('DELETE', `/v1/admin/platform-keys/${bKey.id}`);
    expect([403, 404], res.text).toContain(res.status);
    expectStatus(await call({ method: 'GET', path: '/v1/platform/tenants', token: bKey.token }), 200, 'B platform key after A guessed its id');
  });

  it("a platform key cannot delete a tenant it did not provision (B, its own tenant A, or P by B's key)", async () => {
    for (const [token, tenantId] of [[A.platKey, B.id], [A.platKey, A.id], [B.platKey, P.id]] as const) {
      const res = await call({ method: 'DELETE', path: `/v1/platform/tenants/${tenantId}`, token });
      expect([403, 404], `${tenantId}: ${res.text}`).toContain(res.status);
    }
    expectStatus(await call({ method: 'GET', path: `/v1/datasets/${B.datasets[0]}`, token: B.admin, tenant: B.id }), 200, 'B intact');
    expectStatus(await call({ method: 'GET', path: `/v1/datasets/${A.datasets[0]}`, token: A.admin, tenant: A.id }), 200, 'A intact');
    expectStatus(await call({ method: 'GET', path: `/v1/datasets/${P.datasets[0]}`, token: A.platKey, tenant: P.id }), 200, 'P intact');
    const listed = expectStatus(await call({ method: 'GET', path: '/v1/platform/tenants', token: B.platKey }), 200);
    expect(listed.tenants.map((t: Json) => t.tenant_id)).not.toContain(P.id);
  });
});
