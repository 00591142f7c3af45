import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, svc, tempDir, type Server } from './helpers/cli.js';

describe('svc login / logout', () => {
  const dir = tempDir('svc-login-');
  const dataDir = join(dir.path, 'data');
  const config = join(dir.path, 'config');
  const emptyDataHome = join(dir.path, 'nothing-here'); // the default data dir is $XDG_DATA_HOME/svc: none there
  const credentials = join(config, 'svc', 'credentials.json');
  let server: Server;
  let admin: ReturnType<typeof init>;

  // No --url, SVC_URL, SVC_DATA_DIR or usable data dir: only a profile can make these commands work.
  const run = (args: string[], input?: string, env: Record<string, string> = {}) =>
    svc([...args, '--output', 'json'], { input, env: { XDG_CONFIG_HOME: config, XDG_DATA_HOME: emptyDataHome, SVC_KEYRING: 'off', SVC_PROFILE: '', ...env } });

  beforeAll(async () => {
    admin = init(dataDir);
    server = await serve(dataDir);
  });
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('refuses a bad token with exit 4 and stores nothing', () => {
    const r = run(['login', '--url', server.url, '--token-stdin'], 'not-a-token\n');
    expect(r.status).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(join(config, 'svc'))).toBe(false);
  });

  it('fails with exit 1 when the server cannot be reached', () => {
    const r = run(['login', '--url', 'http://127.0.0.1:9', '--token-stdin'], admin.token);
    expect(r.status).toBe(1);
    expect(existsSync(join(config, 'svc'))).toBe(false);
  });

  it('stores a good token and the profile, printing who it is but never the token', () => {
    const r = run(['login', '--url', server.url, '--token-stdin'], `${admin.token}\n`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toEqual({ profile: 'default', url: server.url, user_id: admin.user_id, email: expect.any(String), tenant_id: admin.tenant_id });
    expect(r.stdout + r.stderr).not.toContain(admin.token);
    expect(r.stderr).toContain('SVC_KEYRING=off; storing the token in');
    const cfg = JSON.parse(readFileSync(join(config, 'svc', 'config.json'), 'utf8'));
    expect(cfg).toEqual({ current: 'default', profiles: { default: { url: server.url, tenant: admin.tenant_id } } });
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
  });

  it('lets later commands reach the server through the profile', () => {
    expect(run(['datasets', 'create', 'logs']).status).toBe(0);
    const r = run(['datasets', 'list']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().datasets.map((d: any) => d.dataset_id)).toEqual(['logs']);
    expect(r.stderr).toBe('');
  });

  it('goes to a data dir named by SVC_DATA_DIR or --data-dir rather than the profile', () => {
    const localDir = join(dir.path, 'local');
    const local = init(localDir);
    expect(local.tenant_id).not.toBe(admin.tenant_id);
    expect(run(['whoami']).json().tenants[0].tenant_id).toBe(admin.tenant_id);
    expect(run(['whoami'], undefined, { SVC_DATA_DIR: localDir }).json().tenants[0].tenant_id).toBe(local.tenant_id);
    expect(run(['--data-dir', localDir, 'whoami']).json().tenants[0].tenant_id).toBe(local.tenant_id);
    expect(run(['whoami'], undefined, { SVC_DATA_DIR: '' }).json().tenants[0].tenant_id).toBe(admin.tenant_id); // empty is unset
  });

  it('treats an unknown --profile as not found', () => {
    expect(run(['--profile', 'nope', 'datasets', 'list']).status).toBe(3);
  });

  it('forgets token and profile at logout, so the command falls back to the (empty) data dir: exit 3', () => {
    const out = run(['logout']);
    expect(out.status, out.stderr).toBe(0);
    expect(out.json()).toMatchObject({ profile: 'default', url: server.url, logged_out: true });
    expect(JSON.parse(readFileSync(credentials, 'utf8')).tokens).toEqual({});
    const r = run(['datasets', 'list']);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('no data dir');
  });

  it('documents itself with an example', () => {
    for (const cmd of ['login', 'logout']) expect(svc([cmd, '--help']).stdout).toContain('Example:');
  });
});
