import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecret } from '../src/engine/auth/secret.js';
import { Sessions } from '../src/engine/auth/sessions.js';
import { init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus } from './helpers/http.js';

/** Console sessions over a real `svc serve`: a link from `svc console`, a cookie, CSRF, sign-out. */
describe('web console sessions', () => {
  const dir = tempDir('svc-console-session-');
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let admin: { tenant_id: string; user_id: string; token: string };
  const http = client(() => server.url);

  /** A fresh sign-in code, as `svc console` prints it in its link. */
  const code = (args: string[] = []) => {
    const r = svc(['console', '--output', 'json', ...args], { dataDir });
    expect(r.status, r.stderr).toBe(0);
    const url = new URL(r.json().url);
    expect(url.origin).toBe(server.url);
    return new URLSearchParams(url.hash.slice(url.hash.indexOf('?'))).get('code')!;
  };
  const signIn = async () => {
    const res = await http.post('/v1/console/session', { code: code() });
    const body = expectStatus(res, 200);
    const cookie = String(res.headers['set-cookie']).split(';')[0];
    return { csrf: body.csrf_token as string, cookie, body, setCookie: String(res.headers['set-cookie']) };
  };
  const asCookie = (cookie: string, extra: Record<string, string> = {}) => ({ token: null, tenant: admin.tenant_id, headers: { cookie, ...extra } });

  beforeAll(async () => {
    admin = init(dataDir);
    server = await serve(dataDir);
  });
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('exchanges a link once for an HttpOnly, SameSite=Strict cookie that works on every /v1 route', async () => {
    const c = code();
    const first = await http.post('/v1/console/session', { code: c }, { token: null });
    const body = expectStatus(first, 200);
    expect(body).toMatchObject({ user_id: admin.user_id, email: 'admin@localhost', tenants: [{ tenant_id: admin.tenant_id, role: 'Admin' }] });
    expect(body.csrf_token).toMatch(/^[\w-]{20,}$/);
    const setCookie = String(first.headers['set-cookie']);
    expect(setCookie).toMatch(/^svc_session_[0-9a-f]{8}=[^;]+;/); // one name per data dir
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/); // plain HTTP on loopback
    expect(expectStatus(await http.post('/v1/console/session', { code: c }, { token: null }), 401).detail).toMatch(/already used/);

    const cookie = setCookie.split(';')[0];
    expect(expectStatus(await http.get('/v1/datasets', asCookie(cookie)), 200).datasets).toEqual([]);
    expect(expectStatus(await http.get('/v1/console/session', asCookie(cookie)), 200).csrf_token).toBe(body.csrf_token);
  });

  it('refuses a change without the CSRF header, or with another session\'s, and makes it with its own', async () => {
    const a = await signIn();
    const b = await signIn();
    expect(a.csrf).not.toBe(b.csrf);
    const create = (headers: Record<string, string>) => http.post('/v1/admin/datasets', { dataset_id: 'from-console' }, asCookie(a.cookie, headers));
    expect(expectStatus(await create({}), 403).detail).toMatch(/x-csrf-token/);
    expect(expectStatus(await create({ 'x-csrf-token': b.csrf }), 403).detail).toMatch(/x-csrf-token/);
    expectStatus(await create({ 'x-csrf-token': a.csrf }), 201);
    // minting a key needs a console session: a cookie session is one
    const key = expectStatus(await http.post('/v1/admin/api-keys', { name: 'from-console', role: 'Member' }, asCookie(a.cookie, { 'x-csrf-token': a.csrf })), 201);
    expect(key.token).toMatch(/^svctk\.v1\./);
  });

  it('signs out for good: the cookie is cleared and its token refused, as cookie and as bearer', async () => {
    const s = await signIn();
    const token = decodeURIComponent(s.cookie.slice(s.cookie.indexOf('=') + 1));
    expect(expectStatus(await http.del('/v1/console/session', asCookie(s.cookie)), 403).detail).toMatch(/x-csrf-token/);
    const out = await http.del('/v1/console/session', asCookie(s.cookie, { 'x-csrf-token': s.csrf }));
    expectStatus(out, 204);
    expect(String(out.headers['set-cookie'])).toMatch(new RegExp(`${s.cookie.split('=')[0]}=;.*Expires=Thu, 01 Jan 1970`));
    expectStatus(await http.get('/v1/console/session', asCookie(s.cookie)), 401);
    expectStatus(await http.get('/v1/datasets', asCookie(s.cookie)), 401);
    expectStatus(await http.get('/v1/datasets', { token, tenant: admin.tenant_id }), 401);
    // the same token spelled otherwise (a trailing '=', other unused bits in the signature's last character) is the same session
    const [head, body, sig] = token.split('.');
    const last = 'AQgw'.indexOf(sig.at(-1)!) >= 0 ? 'AQgw' : 'BRhx';
    for (const spelled of [`${token}=`, ...[...last].filter((c) => c !== sig.at(-1)).map((c) => `${head}.${body}.${sig.slice(0, -1)}${c}`)]) {
      expectStatus(await http.get('/v1/datasets', { token: spelled, tenant: admin.tenant_id }), 401);
    }
    // other sessions go on
    expectStatus(await http.get('/v1/datasets', { token: admin.token, tenant: admin.tenant_id }), 200);
  });

  it('a new sign-in in the same browser ends the session it replaces', async () => {
    const first = await signIn();
    const res = await http.post('/v1/console/session', { code: code() }, { headers: { cookie: first.cookie } });
    expectStatus(res, 200);
    expectStatus(await http.get('/v1/console/session', asCookie(first.cookie)), 401);
    expectStatus(await http.get('/v1/console/session', asCookie(String(res.headers['set-cookie']).split(';')[0])), 200);
  });

  it('takes only console sessions from the cookie, and answers in the order 401, 400, 403', async () => {
    const s = await signIn();
    const name = s.cookie.split('=')[0];
    const key = expectStatus(await http.post('/v1/admin/api-keys', { name: `k-${Date.now()}`, role: 'Admin' }, asCookie(s.cookie, { 'x-csrf-token': s.csrf })), 201);
    const apiKey: string = key.token;
    expectStatus(await http.get('/v1/datasets', asCookie(`${name}=${apiKey}`)), 401);
    // no tenant header and no CSRF header: the 400 comes first
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'x' }, { token: null, tenant: null, headers: { cookie: s.cookie } }), 400);
    // an API key is authenticated, but has no console session to show or end
    expectStatus(await http.get('/v1/console/session', { token: apiKey }), 403);
    expectStatus(await http.del('/v1/console/session', { token: apiKey }), 403);
  });

  it('refuses a forged, expired or mistyped code, and a session token used as a code', async () => {
    expectStatus(await http.post('/v1/console/session', { code: 'not-a-code' }), 401);
    expectStatus(await http.post('/v1/console/session', { code: admin.token }), 401);
    expectStatus(await http.post('/v1/console/session', { code: 'x'.repeat(100_000) }), 422);
    expectStatus(await http.post('/v1/console/session', {}), 422);
    const expired = await new Sessions(loadSecret(dataDir)).issueSignIn(admin.user_id, -60); // signed a minute past its end
    expect(expectStatus(await http.post('/v1/console/session', { code: expired }), 401).detail).toMatch(/expired/);
  });

  it('a bearer token needs no CSRF header, and wins over a cookie sent beside it', async () => {
    const s = await signIn();
    await http.del('/v1/console/session', asCookie(s.cookie, { 'x-csrf-token': s.csrf }));
    // the cookie's session has ended, the bearer's has not
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'by-bearer' }, { token: admin.token, tenant: admin.tenant_id, headers: { cookie: s.cookie } }), 201);
  });

  it('svc console names a user, and says so in one line when no server holds the data dir', async () => {
    expect(svc(['members', 'add', 'dev@example.test', '--role', 'member'], { dataDir }).status).toBe(0);
    const r = await http.post('/v1/console/session', { code: code(['--email', 'dev@example.test']) });
    expect(expectStatus(r, 200)).toMatchObject({ email: 'dev@example.test', tenants: [{ role: 'Member' }] });
    const none = svc(['console'], { dataDir: join(dir.path, 'other') });
    expect(none.status).not.toBe(0);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(/svc serve/);
    const human = svc(['console', '--no-open', '--output', 'table'], { dataDir });
    expect(human.status).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^Sign in .*\\n${server.url.replace(/\./g, '\\.')}/#/signin\\?code=`));
  });
});
