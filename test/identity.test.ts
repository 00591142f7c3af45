/**
 * Identity features through HTTP, against one real `svc serve` on loopback over a fresh data dir:
 * GET /v1/me, members, tenant keys, platform keys and their rotation, platform-provisioned tenants
 * and their deletion, and where secrets may (not) end up: the LMDB files, the `secret` file, the
 * request log. Checked against spec/api-spec.md ("Authentication", "Errors", "Platform") and
 * CONTRACT.md ("Keys and tenants").
 *
 * Tenant A comes from `svc init`; tenant B, a second tenant with its own admin, is added through
 * the engine in-process before the server starts (the only way to get a second admin).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { openStore, SYSTEM } from '../src/engine/store/db.js';
import { svcCommand, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type CallOpts, type Json, type Res } from './helpers/http.js';

// ---------------------------------------------------------------------------------------------
// Helpers

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let dir: ReturnType<typeof tempDir>;
let server: Server;
let admin: { tenant_id: string; user_id: string; token: string };
/** the tenants deleted in "platform tenants", for the store check at the end */
const deletedTenants: string[] = [];
const B = { id: '', name: 'bravo', email: 'b-admin@example.test', userId: '', token: '' };
/** every credential this file saw: none may be stored in plaintext or logged */
const tokens: string[] = [];

const { call, get, post, del } = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));

/** ApiError: `detail` is a string, or {code, message}. */
function expectApiError(res: Res, status: number) {
  const body = expectStatus(res, status);
  expect(typeof body.detail === 'string' || (typeof body.detail?.code === 'string' && typeof body.detail?.message === 'string'), res.text).toBe(true);
}

/** HTTPValidationError at `loc`. */
function expectValidation(res: Res, loc: (string | number)[]) {
  const body = expectStatus(res, 422);
  expect(Array.isArray(body.detail), res.text).toBe(true);
  expect(body.detail).toContainEqual(expect.objectContaining({ loc, msg: expect.any(String), type: expect.any(String) }));
}

const ndjson = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** Streams rows into a dataset's hosted source and waits for the run to be ready. */
async function ingest(datasetId: string, rows: unknown[], o: CallOpts = {}): Promise<Json> {
  const accepted = expectStatus(await call('POST', `/v1/ingest/sources/${datasetId}/stream?format=ndjson`, { ...o, body: ndjson(rows), contentType: 'application/x-ndjson' }), 202);
  const run = await until(`run ${accepted.ingest_run_id}`, async () => {
    const r = expectStatus(await get(`/v1/ingest/runs/${accepted.ingest_run_id}`, o), 200);
    return r.status === 'ready' || r.status === 'failed' ? r : undefined;
  });
  expect(run.status, JSON.stringify(run)).toBe('ready');
  return run;
}

async function mintTenantKey(name: string, role: 'admin' | 'member', extra: Record<string, unknown> = {}, o: CallOpts = {}): Promise<Json> {
  const key = expectStatus(await post('/v1/admin/api-keys', { name, role, ...extra }, o), 201);
  tokens.push(key.token);
  return key;
}

async function mintPlatformKey(name: string, o: CallOpts = {}): Promise<Json> {
  const key = expectStatus(await post('/v1/admin/platform-keys', { name }, o), 201);
  tokens.push(key.token);
  return key;
}

/** `svc token create --email E`: a console session for that user, minted from the data dir. */
function sessionFor(email: string): { token: string; user_id: string } {
  const r = svc(['token', 'create', '--email', email, '--ttl', '1h', '--output', 'json'], { dataDir: dir.path });
  expect(r.status, r.stderr).toBe(0);
  const out = r.json();
  tokens.push(out.token);
  return out;
}

const secretOf = (token: string) => token.slice(token.lastIndexOf('.') + 1);

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  dir = tempDir('svc-identity-');
  admin = init(dir.path);
  tokens.push(admin.token);
  const engine = await Engine.open(dir.path);
  try {
    const b = await engine.directory.createTenant(B.name, B.email);
    B.id = b.tenant.tenant_id;
    B.userId = b.user.user_id;
    B.token = await engine.sessions.issue(b.user.user_id, 3600);
    tokens.push(B.token);
  } finally {
    await engine.close();
  }
  server = await serve(dir.path);
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('GET /v1/me', () => {
  it('takes no tenant header and answers exactly user_id, email, is_staff, tenants[] with tenant_id, name, role, is_admin', async () => {
    const me = expectStatus(await get('/v1/me', { tenant: null }), 200);
    expect(me).toEqual({
      user_id: admin.user_id,
      email: 'admin@localhost',
      is_staff: false,
      tenants: [{ tenant_id: admin.tenant_id, name: 'default', role: 'Admin', is_admin: true }],
    });
  });

  it('a tenant header is not needed and changes nothing, even naming a tenant the caller cannot reach', async () => {
    const plain = expectStatus(await get('/v1/me', { tenant: null }), 200);
    expect(expectStatus(await get('/v1/me'), 200)).toEqual(plain);
    expect(expectStatus(await get('/v1/me', { tenant: B.id }), 200)).toEqual(plain);
  });

  it("another tenant's admin sees only its own tenant", async () => {
    expect(expectStatus(await get('/v1/me', { token: B.token, tenant: null }), 200)).toEqual({
      user_id: B.userId,
      email: B.email,
      is_staff: false,
      tenants: [{ tenant_id: B.id, name: B.name, role: 'Admin', is_admin: true }],
    });
  });

  it('no token → 401; a garbage token → 401', async () => {
    expectApiError(await get('/v1/me', { token: null, tenant: null }), 401);
    expectApiError(await get('/v1/me', { token: 'x.y.z', tenant: null }), 401);
  });
});

describe('members', () => {
  const email = 'reader@example.test';
  let reader: { token: string; user_id: string };

  it('POST /v1/admin/members → 201 {user_id, email, role, created_at}; GET lists admin and member', async () => {
    const added = expectStatus(await post('/v1/admin/members', { email, role: 'member' }), 201);
    expect(added).toEqual({ user_id: expect.stringMatching(/^usr_/), email, role: 'Member', created_at: expect.stringMatching(ISO) });
    const list = expectStatus(await get('/v1/admin/members'), 200);
    expect(list.members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ user_id: admin.user_id, email: 'admin@localhost', role: 'Admin' }),
        expect.objectContaining({ user_id: added.user_id, email, role: 'Member' }),
      ]),
    );
    expect(list.members).toHaveLength(2);
    // B's members are B's
    const bList = expectStatus(await get('/v1/admin/members', { token: B.token, tenant: B.id }), 200);
    expect(bList.members.map((m: Json) => m.email)).toEqual([B.email]);
  });

  it('invalid member bodies → 422', async () => {
    expectValidation(await post('/v1/admin/members', { email: 'not-an-email', role: 'member' }), ['body', 'email']);
    expectValidation(await post('/v1/admin/members', { email: 'x@example.test', role: 'owner' }), ['body', 'role']);
    expectValidation(await post('/v1/admin/members', { role: 'member' }), ['body', 'email']);
  });

  it('`svc token create --email` gives the member a session; /v1/me says Member', async () => {
    reader = sessionFor(email);
    const me = expectStatus(await get('/v1/me', { token: reader.token, tenant: null }), 200);
    expect(me).toEqual({ user_id: reader.user_id, email, is_staff: false, tenants: [{ tenant_id: admin.tenant_id, name: 'default', role: 'Member', is_admin: false }] });
  });

  it('the member reads (datasets, search, runs, members) but gets 403 on creating, deleting and minting', async () => {
    expectStatus(await post('/v1/admin/datasets', { dataset_id: 'team-logs' }), 201);
    await ingest('team-logs', [{ id: 'r1', msg: 'disk full on node one' }, { id: 'r2', msg: 'all quiet' }]);
    const o = { token: reader.token };
    const list = expectStatus(await get('/v1/datasets', o), 200);
    expect(list.datasets.map((d: Json) => d.dataset_id)).toContain('team-logs');
    expect(expectStatus(await get('/v1/datasets/team-logs', o), 200).record_count).toBe(2);
    const found = expectStatus(await post('/v1/search', { text: 'disk' }, o), 200);
    expect(found.records.map((r: Json) => r.id)).toEqual(['r1']);
    expectStatus(await get('/v1/ingest/runs', o), 200);
    expectStatus(await get('/v1/admin/members', o), 200);

    expectApiError(await post('/v1/admin/datasets', { dataset_id: 'mine' }, o), 403);
    expectApiError(await del('/v1/admin/datasets/team-logs', o), 403);
    expectApiError(await call('POST', '/v1/ingest/sources/team-logs/stream?format=ndjson', { ...o, body: ndjson([{ id: 'x', msg: 'y' }]) }), 403);
    expectApiError(await post('/v1/admin/members', { email: 'friend@example.test', role: 'admin' }, o), 403);
    expectApiError(await post('/v1/admin/api-keys', { name: 'mine', role: 'member' }, o), 403);
    expectApiError(await post('/v1/admin/platform-keys', { name: 'mine' }, o), 403);
    expectStatus(await get('/v1/datasets/mine'), 404);
    expect(expectStatus(await get('/v1/datasets/team-logs'), 200).record_count).toBe(2);
  });

  it("changing a member's role takes effect on the member's next request", async () => {
    expect(expectStatus(await post('/v1/admin/members', { email, role: 'admin' }), 201).role).toBe('Admin');
    expectStatus(await post('/v1/admin/datasets', { dataset_id: 'by-reader' }, { token: reader.token }), 201);
    expect(expectStatus(await get('/v1/me', { token: reader.token, tenant: null }), 200).tenants[0]).toMatchObject({ role: 'Admin', is_admin: true });
    expect(expectStatus(await post('/v1/admin/members', { email, role: 'member' }), 201).role).toBe('Member');
    expectApiError(await post('/v1/admin/datasets', { dataset_id: 'by-reader-2' }, { token: reader.token }), 403);
    expect(expectStatus(await get('/v1/admin/members'), 200).members).toHaveLength(2);
  });

  it('a member of A has no access to B', async () => {
    expectApiError(await get('/v1/datasets', { token: reader.token, tenant: B.id }), 403);
  });
});

describe('tenant keys', () => {
  let reader: Json;

  it('POST /v1/admin/api-keys → 201 with the token (svctk.v1.) once, and the key fields', async () => {
    const before = Date.now();
    reader = await mintTenantKey('reader-key', 'member');
    expect(reader).toEqual({
      id: expect.any(Number),
      name: 'reader-key',
      role: 'Member',
      prefix: expect.stringMatching(/^svctk\.v1\./),
      created_at: expect.stringMatching(ISO),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
      token: expect.stringMatching(/^svctk\.v1\./),
    });
    expect(Number.isInteger(reader.id)).toBe(true);
    expect(reader.token.startsWith(reader.prefix)).toBe(true);
    expect(reader.prefix.length).toBeLessThan(reader.token.length);
    expect(reader.prefix).not.toContain(secretOf(reader.token));
    expect(Date.parse(reader.created_at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('GET lists keys with their prefix and never a token', async () => {
    const res = await get('/v1/admin/api-keys');
    const list = expectStatus(res, 200);
    const mine = list.api_keys.find((k: Json) => k.id === reader.id);
    expect(mine).toMatchObject({ name: 'reader-key', role: 'Member', prefix: reader.prefix, revoked_at: null });
    for (const k of list.api_keys) expect(k.token ?? null).toBeNull();
    expect(res.text).not.toContain(secretOf(reader.token));
    // a member may list them too, and gets no token either
    const asMember = await get('/v1/admin/api-keys', { token: reader.token });
    expectStatus(asMember, 200);
    expect(asMember.text).not.toContain(secretOf(reader.token));
  });

  it('the key reads; a member key cannot create; an admin key can; last_used_at is set after use', async () => {
    const o = { token: reader.token };
    expectStatus(await get('/v1/datasets', o), 200);
    expectStatus(await post('/v1/search', { text: 'disk' }, o), 200);
    expectApiError(await post('/v1/admin/datasets', { dataset_id: 'by-member-key' }, o), 403);
    const used = await until('last_used_at', async () => {
      const k = expectStatus(await get('/v1/admin/api-keys'), 200).api_keys.find((x: Json) => x.id === reader.id);
      return k.last_used_at ? k : undefined;
    }, 5000);
    expect(used.last_used_at).toMatch(ISO);
    expect(Date.parse(used.last_used_at)).toBeGreaterThanOrEqual(Date.parse(reader.created_at));

    const writer = await mintTenantKey('writer-key', 'admin');
    expect(writer.role).toBe('Admin');
    expectStatus(await post('/v1/admin/datasets', { dataset_id: 'by-admin-key' }, { token: writer.token }), 201);
    // /v1/me for a key: its tenant, with the key's role
    const me = expectStatus(await get('/v1/me', { token: reader.token, tenant: null }), 200);
    expect(me.tenants).toEqual([{ tenant_id: admin.tenant_id, name: 'default', role: 'Member', is_admin: false }]);
    // a key of A has no access to B
    expectApiError(await get('/v1/datasets', { token: writer.token, tenant: B.id }), 403);
  });

  it('an API key cannot mint keys (403), of either kind', async () => {
    const writer = await mintTenantKey('writer-2', 'admin');
    expectApiError(await post('/v1/admin/api-keys', { name: 'minted-by-key', role: 'member' }, { token: writer.token }), 403);
    expectApiError(await post('/v1/admin/platform-keys', { name: 'minted-by-key' }, { token: writer.token }), 403);
  });

  it('DELETE revokes: the key gets 401 on its very next request; the list shows revoked_at', async () => {
    const victim = await mintTenantKey('to-revoke', 'admin');
    expectStatus(await get('/v1/datasets', { token: victim.token }), 200);
    const revoked = expectStatus(await del(`/v1/admin/api-keys/${victim.id}`), 200);
    expect(revoked).toMatchObject({ id: victim.id, name: 'to-revoke', revoked_at: expect.stringMatching(ISO) });
    expect(revoked.token ?? null).toBeNull();
    expectApiError(await get('/v1/datasets', { token: victim.token }), 401);
    expectApiError(await get('/v1/me', { token: victim.token, tenant: null }), 401);
    const listed = expectStatus(await get('/v1/admin/api-keys'), 200).api_keys.find((k: Json) => k.id === victim.id);
    expect(listed.revoked_at).toMatch(ISO);
    expectApiError(await del('/v1/admin/api-keys/999999'), 404);
  });

  it('an expired key → 401', async () => {
    const expiresAt = Date.now() + 1500;
    const key = await mintTenantKey('short-lived', 'member', { expires_at: new Date(expiresAt).toISOString() });
    expect(Date.parse(key.expires_at)).toBe(Math.floor(expiresAt));
    expectStatus(await get('/v1/datasets', { token: key.token }), 200);
    await sleep(Math.max(0, expiresAt - Date.now()) + 150);
    expectApiError(await get('/v1/datasets', { token: key.token }), 401);
  });

  it('invalid key bodies → 422', async () => {
    expectValidation(await post('/v1/admin/api-keys', { name: '', role: 'member' }), ['body', 'name']);
    expectValidation(await post('/v1/admin/api-keys', { name: 'x', role: 'root' }), ['body', 'role']);
    expectValidation(await post('/v1/admin/api-keys', { name: 'x', role: 'member', expires_at: 'tomorrow' }), ['body', 'expires_at']);
  });
});

describe('platform keys', () => {
  it('POST /v1/admin/platform-keys → 201 PlatformKeyResponse with an svcpk.v1. token', async () => {
    const key = await mintPlatformKey('plat-one');
    expect(key).toMatchObject({ id: expect.any(Number), name: 'plat-one', created_at: expect.stringMatching(ISO), token: expect.stringMatching(/^svcpk\.v1\./) });
    expect(Number.isInteger(key.id)).toBe(true);
    expect(key.last_used_at ?? null).toBeNull();
    expect(key.revoked_at ?? null).toBeNull();
  });

  it('name "" or 256 characters → 422; 255 characters → 201; no name → 422', async () => {
    expectValidation(await post('/v1/admin/platform-keys', { name: '' }), ['body', 'name']);
    expectValidation(await post('/v1/admin/platform-keys', { name: 'n'.repeat(256) }), ['body', 'name']);
    expectValidation(await post('/v1/admin/platform-keys', {}), ['body', 'name']);
    expect((await mintPlatformKey('n'.repeat(255))).name).toBe('n'.repeat(255));
  });

  it('a duplicate name → 409 ApiError', async () => {
    expectApiError(await post('/v1/admin/platform-keys', { name: 'plat-one' }), 409);
  });

  it('minting with an API key (tenant key or platform key) → 403; with a member session → 403; without the tenant header → 400', async () => {
    const tk = await mintTenantKey('plat-minter', 'admin');
    const pk = await mintPlatformKey('plat-minter');
    expectApiError(await post('/v1/admin/platform-keys', { name: 'by-tenant-key' }, { token: tk.token }), 403);
    expectApiError(await post('/v1/admin/platform-keys', { name: 'by-platform-key' }, { token: pk.token }), 403);
    expectApiError(await post('/v1/admin/api-keys', { name: 'by-platform-key', role: 'member' }, { token: pk.token }), 403);
    const member = sessionFor('reader@example.test');
    expectApiError(await post('/v1/admin/platform-keys', { name: 'by-member' }, { token: member.token }), 403);
    expectApiError(await post('/v1/admin/platform-keys', { name: 'no-header' }, { tenant: null }), 400);
    const names = expectStatus(await get('/v1/admin/platform-keys'), 200).platform_keys.map((k: Json) => k.name);
    for (const n of ['by-tenant-key', 'by-platform-key', 'by-member', 'no-header']) expect(names).not.toContain(n);
  });

  it('GET lists them without tokens; DELETE revokes (the key then gets 401); the name is free again', async () => {
    const key = await mintPlatformKey('plat-revoke');
    expectStatus(await get('/v1/platform/tenants', { token: key.token, tenant: null }), 200);
    const res = await get('/v1/admin/platform-keys');
    const list = expectStatus(res, 200);
    expect(list.platform_keys.map((k: Json) => k.name)).toEqual(expect.arrayContaining(['plat-one', 'plat-revoke']));
    for (const k of list.platform_keys) expect(k.token ?? null).toBeNull();
    for (const t of tokens) expect(res.text).not.toContain(secretOf(t));

    const revoked = expectStatus(await del(`/v1/admin/platform-keys/${key.id}`), 200);
    expect(revoked).toMatchObject({ id: key.id, name: 'plat-revoke', revoked_at: expect.stringMatching(ISO) });
    expectApiError(await get('/v1/platform/tenants', { token: key.token, tenant: null }), 401);
    const listed = expectStatus(await get('/v1/admin/platform-keys'), 200).platform_keys.find((k: Json) => k.id === key.id);
    expect(listed.revoked_at).toMatch(ISO);
    await mintPlatformKey('plat-revoke');
    expectApiError(await del('/v1/admin/platform-keys/999999'), 404);
  });

  it('POST /v1/platform/keys with a platform key → 201 a new key; the calling key → 401 afterwards; the new one works', async () => {
    const old = await mintPlatformKey('plat-rotate');
    const res = await call('POST', '/v1/platform/keys', { token: old.token, tenant: null });
    const fresh = expectStatus(res, 201);
    tokens.push(fresh.token);
    expect(fresh).toMatchObject({ id: expect.any(Number), name: expect.any(String), created_at: expect.stringMatching(ISO), token: expect.stringMatching(/^svcpk\.v1\./) });
    expect(fresh.token).not.toBe(old.token);
    expect(fresh.id).not.toBe(old.id);
    expectApiError(await get('/v1/platform/tenants', { token: old.token, tenant: null }), 401);
    expectApiError(await call('POST', '/v1/platform/keys', { token: old.token, tenant: null }), 401);
    expectStatus(await get('/v1/platform/tenants', { token: fresh.token, tenant: null }), 200);
    const list = expectStatus(await get('/v1/admin/platform-keys'), 200).platform_keys;
    expect(list.find((k: Json) => k.id === old.id).revoked_at).toMatch(ISO);
    expect(list.find((k: Json) => k.id === fresh.id).revoked_at ?? null).toBeNull();
  });

  it('POST /v1/platform/keys with a session or a tenant key → 403', async () => {
    expectApiError(await call('POST', '/v1/platform/keys', { tenant: null }), 403);
    const tk = await mintTenantKey('rotator', 'admin');
    expectApiError(await call('POST', '/v1/platform/keys', { token: tk.token, tenant: null }), 403);
  });
});

describe('platform tenants', () => {
  let platform: Json;
  let bPlatform: Json;
  let p: Json;
  let q: Json;
  const ROWS = Array.from({ length: 5 }, (_, i) => ({ id: `p-${i}`, msg: `customer order ${i} shipped`, level: i % 2 ? 'INFO' : 'WARN' }));
  const P_DATASET = 'orders';

  beforeAll(async () => {
    platform = await mintPlatformKey('provisioner');
    bPlatform = await mintPlatformKey('b-provisioner', { token: B.token, tenant: B.id });
  });

  it('POST /v1/platform/tenants → 201 {tenant_id, name, created_at}; no tenant header needed', async () => {
    const res = await post('/v1/platform/tenants', { name: 'customer-1' }, { token: platform.token, tenant: null });
    p = expectStatus(res, 201);
    expect(p).toEqual({ tenant_id: expect.any(String), name: 'customer-1', created_at: expect.stringMatching(ISO) });
    expect(p.tenant_id).not.toBe(admin.tenant_id);
    q = expectStatus(await post('/v1/platform/tenants', { name: 'customer-b' }, { token: bPlatform.token, tenant: null }), 201);
    expectValidation(await post('/v1/platform/tenants', { name: '' }, { token: platform.token, tenant: null }), ['body', 'name']);
  });

  it('/v1/platform/* with a session or a tenant key → 403', async () => {
    expectApiError(await post('/v1/platform/tenants', { name: 'by-session' }, { tenant: null }), 403);
    expectApiError(await get('/v1/platform/tenants', { tenant: null }), 403);
    const tk = await mintTenantKey('tenant-lister', 'admin');
    expectApiError(await get('/v1/platform/tenants', { token: tk.token, tenant: null }), 403);
    expectApiError(await get('/v1/platform/tenants', { token: null, tenant: null }), 401);
  });

  it('GET /v1/platform/tenants lists only the tenants this platform provisioned', async () => {
    const mine = expectStatus(await get('/v1/platform/tenants', { token: platform.token, tenant: null }), 200);
    expect(mine.tenants).toEqual([{ tenant_id: p.tenant_id, name: 'customer-1', created_at: p.created_at }]);
    const theirs = expectStatus(await get('/v1/platform/tenants', { token: bPlatform.token, tenant: null }), 200);
    expect(theirs.tenants.map((t: Json) => t.tenant_id)).toEqual([q.tenant_id]);
    // any platform key of the same tenant sees the same list
    const other = await mintPlatformKey('provisioner-2');
    expect(expectStatus(await get('/v1/platform/tenants', { token: other.token, tenant: null }), 200).tenants.map((t: Json) => t.tenant_id)).toEqual([p.tenant_id]);
  });

  it('the platform key acts in its provisioned tenant via the tenant header: dataset, stream ingest, search', async () => {
    const o = { token: platform.token, tenant: p.tenant_id };
    const ds = expectStatus(await post('/v1/admin/datasets', { dataset_id: P_DATASET }, o), 201);
    expect(ds.tenant_id).toBe(p.tenant_id);
    await ingest(P_DATASET, ROWS, o);
    const found = expectStatus(await post('/v1/search', { text: 'shipped', limit: 100 }, o), 200);
    expect(found.records.map((r: Json) => r.id).sort()).toEqual(ROWS.map((r) => r.id));
    for (const r of found.records) expect(r.provenance).toMatchObject({ tenant_id: p.tenant_id, dataset_id: P_DATASET });
    expect(expectStatus(await get('/v1/datasets', o), 200).datasets.map((d: Json) => d.dataset_id)).toEqual([P_DATASET]);
    // its own tenant A stays apart
    expect(expectStatus(await get('/v1/datasets'), 200).datasets.map((d: Json) => d.dataset_id)).not.toContain(P_DATASET);
    expect(expectStatus(await post('/v1/search', { text: 'shipped' }), 200).records).toEqual([]);
    // /v1/me for the platform key: its own tenant and the provisioned one, as Admin
    const me = expectStatus(await get('/v1/me', { token: platform.token, tenant: null }), 200);
    expect(me.tenants).toEqual(
      expect.arrayContaining([
        { tenant_id: admin.tenant_id, name: 'default', role: 'Admin', is_admin: true },
        { tenant_id: p.tenant_id, name: 'customer-1', role: 'Admin', is_admin: true },
      ]),
    );
    expect(me.tenants.map((t: Json) => t.tenant_id)).not.toContain(q.tenant_id);
    expect(me.tenants.map((t: Json) => t.tenant_id)).not.toContain(B.id);
  });

  it('the platform key gets 403 in a tenant it did not provision; others get 403 in its tenant', async () => {
    expectApiError(await get('/v1/datasets', { token: platform.token, tenant: q.tenant_id }), 403);
    expectApiError(await get('/v1/datasets', { token: platform.token, tenant: B.id }), 403);
    expectApiError(await post('/v1/admin/datasets', { dataset_id: 'planted' }, { token: platform.token, tenant: q.tenant_id }), 403);
    expectApiError(await get('/v1/datasets', { token: bPlatform.token, tenant: p.tenant_id }), 403);
    expectApiError(await get('/v1/datasets', { tenant: p.tenant_id }), 403); // A's admin is no member of it
    expectApiError(await del(`/v1/platform/tenants/${q.tenant_id}`, { token: platform.token, tenant: null }), 404);
    expect(expectStatus(await get('/v1/platform/tenants', { token: bPlatform.token, tenant: null }), 200).tenants.map((t: Json) => t.tenant_id)).toEqual([q.tenant_id]);
  });

  it('DELETE /v1/platform/tenants/{id} → a data-deletion job (scope tenant, succeeded, items); the tenant and its data are gone', async () => {
    // a member the platform added to its tenant loses it with the tenant
    expectStatus(await post('/v1/admin/members', { email: 'customer-user@example.test', role: 'admin' }, { token: platform.token, tenant: p.tenant_id }), 201);
    const customer = sessionFor('customer-user@example.test');
    expect(expectStatus(await get('/v1/me', { token: customer.token, tenant: null }), 200).tenants.map((t: Json) => t.tenant_id)).toEqual([p.tenant_id]);
    const accepted = expectStatus(await del(`/v1/platform/tenants/${p.tenant_id}`, { token: platform.token, tenant: null }), 202);
    expect(accepted).toMatchObject({ scope: 'tenant', status: 'pending' });
    const job = await until('the tenant deletion job', async () => {
      const polled = (await get(`/v1/admin/data-deletion-jobs/${accepted.job_id}`, { token: platform.token, tenant: accepted.tenant_id })).body;
      return polled.status === 'succeeded' ? polled : undefined;
    });
    deletedTenants.push(p.tenant_id);
    expect(job).toMatchObject({
      job_id: expect.any(String),
      tenant_id: expect.any(String),
      requested_by: expect.any(String),
      scope: 'tenant',
      status: 'succeeded',
      target_dataset_id: null,
      target_source_id: null,
      target_upload_session_id: null,
      error_message: null,
      created_at: expect.stringMatching(ISO),
      started_at: expect.stringMatching(ISO),
      completed_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Array.isArray(job.items) && job.items.length > 0).toBe(true);
    expect(job.item_total_count).toBe(job.items.length);
    expect(job.item_succeeded_count).toBe(job.items.length);
    expect([job.item_pending_count, job.item_running_count, job.item_failed_count]).toEqual([0, 0, 0]);
    let deleted = 0;
    for (const item of job.items) {
      expect(item).toMatchObject({
        item_id: expect.any(Number),
        item_type: expect.any(String),
        status: 'succeeded',
        attempt_count: expect.any(Number),
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        error_message: null,
        target: expect.any(Object),
        result: expect.objectContaining({ deleted_documents: expect.any(Number) }),
      });
      for (const k of ['next_attempt_at', 'started_at', 'completed_at']) expect(item).toHaveProperty(k);
      deleted += item.result.deleted_documents;
    }
    expect(deleted).toBe(ROWS.length);

    const o = { token: platform.token, tenant: p.tenant_id };
    expect([403, 404]).toContain((await get(`/v1/datasets/${P_DATASET}`, o)).status);
    expect([403, 404]).toContain((await get('/v1/datasets', o)).status);
    expect([403, 404]).toContain((await post('/v1/search', { text: 'shipped' }, o)).status);
    expect([403, 404]).toContain((await post('/v1/admin/datasets', { dataset_id: 'again' }, o)).status);
    const list = expectStatus(await get('/v1/platform/tenants', { token: platform.token, tenant: null }), 200);
    expect(list.tenants.map((t: Json) => t.tenant_id)).not.toContain(p.tenant_id);
    const me = expectStatus(await get('/v1/me', { token: platform.token, tenant: null }), 200);
    expect(me.tenants.map((t: Json) => t.tenant_id)).not.toContain(p.tenant_id);
    expectApiError(await del(`/v1/platform/tenants/${p.tenant_id}`, { token: platform.token, tenant: null }), 404);
    expect(expectStatus(await get('/v1/me', { token: customer.token, tenant: null }), 200).tenants).toEqual([]);
    expectApiError(await get('/v1/datasets', { token: customer.token, tenant: p.tenant_id }), 403);
    for (const sub of ['blobs', 'indexes']) expect(existsSync(join(dir.path, sub, p.tenant_id)), sub).toBe(false);
    // nothing else went with it
    expect(expectStatus(await get('/v1/datasets/team-logs'), 200).record_count).toBe(2);
    expect(expectStatus(await get('/v1/platform/tenants', { token: bPlatform.token, tenant: null }), 200).tenants.map((t: Json) => t.tenant_id)).toEqual([q.tenant_id]);
  });
});

describe('platform tenants: deletion during an ingest', () => {
  it('deleting a tenant while ingests into it are under way and queued leaves nothing of it behind', async () => {
    const platform = await mintPlatformKey('racer');
    const t = expectStatus(await post('/v1/platform/tenants', { name: 'customer-race' }, { token: platform.token, tenant: null }), 201);
    const o = { token: platform.token, tenant: t.tenant_id };
    expectStatus(await post('/v1/admin/datasets', { dataset_id: 'bulk' }, o), 201);
    const rows = Array.from({ length: 40_000 }, (_, i) => ({ id: `bulk-${i}`, msg: `bulk event number ${i} for the race`, level: 'INFO' }));
    // two runs of one dataset: the second waits in the queue behind the first
    for (let i = 0; i < 2; i++) {
      expectStatus(await call('POST', '/v1/ingest/sources/bulk/stream?format=ndjson', { ...o, body: ndjson(rows), contentType: 'application/x-ndjson' }), 202);
    }
    const job = expectStatus(await del(`/v1/platform/tenants/${t.tenant_id}`, { token: platform.token, tenant: null }), 202);
    expect(job).toMatchObject({ scope: 'tenant', status: 'pending' });
    deletedTenants.push(t.tenant_id);
    // the deletion job ends once the runs under way have stopped and every file of the tenant is gone
    await until('the tenant deletion job', async () => {
      const polled = (await get(`/v1/admin/data-deletion-jobs/${job.job_id}`, { token: platform.token, tenant: job.tenant_id })).body;
      if (polled.status === 'failed') throw new Error(`the tenant deletion failed: ${JSON.stringify(polled)}`);
      return polled.status === 'succeeded' || undefined;
    }, 60_000);
    expect([403, 404]).toContain((await get('/v1/datasets/bulk', o)).status);
    expect([403, 404]).toContain((await get('/v1/ingest/runs', o)).status);
    expect(expectStatus(await get('/v1/platform/tenants', { token: platform.token, tenant: null }), 200).tenants.map((x: Json) => x.tenant_id)).not.toContain(t.tenant_id);
    for (const sub of ['blobs', 'indexes']) expect(existsSync(join(dir.path, sub, t.tenant_id)), `${sub}/${t.tenant_id}`).toBe(false);
  });
});

describe('secrets', () => {
  /** Every file of the data dir but the signing secret, as bytes. */
  function dataFiles(root: string): { path: string; bytes: Buffer }[] {
    const out: { path: string; bytes: Buffer }[] = [];
    for (const entry of readdirSync(root, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      if (path === join(root, 'secret')) continue;
      out.push({ path, bytes: readFileSync(path) });
    }
    return out;
  }

  it('the secret file is mode 0600', () => {
    expect(statSync(join(dir.path, 'secret')).mode & 0o777).toBe(0o600);
  });

  it('a token passed in a query string is redacted from the request log', async () => {
    const key = await mintTenantKey('in-query', 'member');
    expectStatus(await get(`/v1/datasets?api_key=${encodeURIComponent(key.token)}&token=${encodeURIComponent(admin.token)}`), 200);
    const line = await until('the log line', async () =>
      server.logs().split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l: Json) => l.route === '/v1/datasets' && String(l.url).includes('api_key=')),
    );
    expect(line.url).toBe('/v1/datasets?api_key=REDACTED&token=REDACTED');
  });

  it('the request log never holds a token or a key secret', async () => {
    await sleep(100);
    const log = server.logs();
    expect(log.split('\n').filter(Boolean).length).toBeGreaterThan(50);
    for (const t of tokens) {
      expect(log.includes(t), `token ${t.slice(0, 16)}… in the log`).toBe(false);
      expect(log.includes(secretOf(t)), `secret of ${t.slice(0, 16)}… in the log`).toBe(false);
    }
  });

  it('no plaintext key in the data dir files (meta/data.mdb included), read while the server runs', () => {
    const keys = tokens.filter((t) => t.startsWith('svctk.v1.') || t.startsWith('svcpk.v1.'));
    expect(keys.length).toBeGreaterThan(10);
    const files = dataFiles(dir.path);
    expect(files.map((f) => f.path)).toContain(join(dir.path, 'meta', 'data.mdb'));
    for (const { path, bytes } of files) {
      for (const t of keys) {
        expect(bytes.includes(Buffer.from(secretOf(t))), `${path} holds the secret of ${t.slice(0, 16)}…`).toBe(false);
        expect(bytes.includes(Buffer.from(t)), `${path} holds ${t.slice(0, 16)}…`).toBe(false);
      }
    }
  });
});

describe('after the server stopped', () => {
  /** every entry of the store: its key, and key and value as text */
  const entries: { key: (string | number)[]; text: string }[] = [];

  beforeAll(async () => {
    await server.stop();
    const store = openStore(dir.path);
    try {
      for (const db of [store.meta, store.records, store.ids]) {
        for (const { key, value } of db.getRange({})) {
          const text = JSON.stringify(key) + JSON.stringify(value, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v));
          entries.push({ key: key as (string | number)[], text });
        }
      }
    } finally {
      await store.close();
    }
  });

  it('no entry of the store holds a key secret', () => {
    expect(entries.length).toBeGreaterThan(10);
    const keys = tokens.filter((t) => t.startsWith('svctk.v1.') || t.startsWith('svcpk.v1.'));
    expect(keys.length).toBeGreaterThan(10);
    for (const { key, text } of entries) {
      for (const t of keys) expect(text.includes(secretOf(t)), `the entry ${JSON.stringify(key)} holds the secret of ${t.slice(0, 16)}…`).toBe(false);
    }
  });

  it('nothing of a deleted tenant remains: no entry under it, no system entry naming it, no blobs or indexes', () => {
    expect(deletedTenants).toHaveLength(2);
    for (const gone of deletedTenants) {
      // under the tenant, or a system entry (tenant record, membership, key, queue entry) naming it
      const leftovers = entries.filter(({ key, text }) => key[0] === gone || (key[0] === SYSTEM && text.includes(gone))).map((e) => e.key);
      expect(leftovers.length, `entries of deleted tenant #${deletedTenants.indexOf(gone)} ${gone}: ${JSON.stringify(leftovers.slice(0, 10))}`).toBe(0);
      for (const sub of ['blobs', 'indexes']) expect(existsSync(join(dir.path, sub, gone)), `${sub}/${gone} after the server stopped`).toBe(false);
    }
  });

  it('a local command on the data dir still completes (no job of a deleted tenant left in the queue)', () => {
    expect(server.proc.exitCode).not.toBeNull();
    const started = Date.now();
    const r = spawnSync(...svcCommand(['datasets', 'list', '--output', 'json']), {
      env: { ...process.env, SVC_DATA_DIR: dir.path, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '' },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.signal, `svc datasets list did not finish within ${Date.now() - started} ms`).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(r.stdout))).toContain('team-logs');
  });
});
