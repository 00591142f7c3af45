import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';

/**
 * Ids, times, tokens and durations differ between two data dirs; everything else must not. A file
 * reaches a server by multipart upload and a local engine directly, so how it arrived differs too.
 */
function normalize(value: unknown): unknown {
  if (typeof value === 'string') {
    return value
      .replace(/\b(ten|usr|run|srch|job)_[0-9a-z]{26}\b/g, '<$1>')
      .replace(/\b(obj|upl)_[0-9a-z]{26}\b/g, '<object>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
      .replace(/^(svctk|svcpk)\.v1\.[0-9a-f]{16}(\.[\w-]+)?$/, '<$1>')
      .replace(/^ey[\w-]+\.[\w-]+\.[\w-]+$/, '<jwt>');
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    const arrival = new Set(['input_kind', 'upload_session_id']);
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !arrival.has(k))
        .map(([k, v]) => [k, k === 'took_ms' ? 0 : k === 'next_cursor' && v ? '<cursor>' : normalize(v)]),
    );
  }
  return value;
}

/** The first `lines` lines of a Loghub file (and a CSV's header), written into `dir`: its path. */
function head(dir: string, file: string, lines: number): string {
  const bytes = readFileSync(join(DATA, file));
  let end = -1;
  for (let i = 0; i < lines; i++) end = bytes.indexOf(0x0a, end + 1);
  const path = join(dir, basename(file));
  writeFileSync(path, bytes.subarray(0, end + 1));
  return path;
}

/** 500 lines of the OpenSSH sample and its CSV: every search below still finds dozens of records */
const scenario = (dir: string): string[][] => [
  ['datasets', 'create', 'ssh', '--no-semantic'], // vectors fill in after `ready` on a server: text only keeps both sides comparable
  ['ingest', 'ssh', head(dir, 'loghub/OpenSSH/OpenSSH_2k.log', 500), '--format', 'text', '--wait'],
  ['ingest', 'ssh', head(dir, 'loghub/OpenSSH/OpenSSH_2k.log_structured.csv', 501), '--wait'],
  ['datasets', 'get', 'ssh'],
  ['datasets', 'list'],
  ['search', 'authentication failure', '--dataset', 'ssh', '--limit', '5'],
  ['search', '--q', 'Component:sshd AND "Invalid user"', '--agg', 'users=terms:EventId', '--limit', '3'],
  ['search', 'root', '--where', 'Pid gt 24000', '--collapse', 'EventId'],
  ['fields', '--dataset', 'ssh'],
  ['runs', 'list', '--dataset', 'ssh'],
  ['members', 'add', 'dev@example.test', '--role', 'member'],
  ['members', 'list'],
  ['keys', 'create', '--kind', 'tenant', '--name', 'ci', '--role', 'member'],
  ['keys', 'list', '--kind', 'tenant'],
  ['keys', 'revoke', '1', '--kind', 'tenant'],
  ['whoami'],
];

describe('remote mode', () => {
  const dir = tempDir();
  const localDir = join(dir.path, 'local');
  const remoteDir = join(dir.path, 'remote');
  let server: Server;
  let token = '';

  beforeAll(async () => {
    init(localDir);
    token = init(remoteDir).token;
    server = await serve(remoteDir);
  });
  afterAll(async () => {
    await server.stop();
    dir.remove();
  });

  it('gives the same JSON as local mode for the same scenario', () => {
    for (const args of scenario(dir.path)) {
      const local = svc([...args, '--output', 'json'], { dataDir: localDir });
      // an empty data dir: only --url can make this work
      const remote = svc([...args, '--output', 'json'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: token } });
      expect(local.status, `local ${args.join(' ')}: ${local.stderr}`).toBe(0);
      expect(remote.status, `remote ${args.join(' ')}: ${remote.stderr}`).toBe(0);
      const [l, r] = [normalize(local.json()), normalize(remote.json())];
      if (args[0] === 'whoami') {
        // a local command acts as the data dir's admin, a remote one as the token's user: the same user here
        expect(r).toEqual(l);
        continue;
      }
      expect(r, args.join(' ')).toEqual(l);
    }
  });

  it('fails alike: not found, bad input, bad token', () => {
    const remote = (args: string[], env: Record<string, string> = {}) =>
      svc(args, { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: token, ...env } });
    for (const [args, code] of [
      [['datasets', 'get', 'nope'], 3],
      [['search', 'x', '--dataset', 'nope'], 3],
      [['search', '--q', 'a:(b'], 2],
      [['datasets', 'create', 'Bad Id!'], 2],
      [['datasets', 'create', 'ssh'], 1],
      [['sql', 'SELEC 1'], 2],
      [['sql', 'DELETE FROM ssh'], 2],
      [['search', '', '--mode', 'semantic'], 2],
    ] as const) {
      const local = svc([...args], { dataDir: localDir });
      expect(local.status, args.join(' ')).toBe(code);
      expect(remote([...args]).status, args.join(' ')).toBe(code);
    }
    const bad = remote(['datasets', 'list'], { SVC_TOKEN: 'garbage' });
    expect(bad.status).toBe(4);
    expect(bad.stderr.trim()).toMatch(/^svc: .*(invalid|authenticated)/i);
    const unreachable = svc(['datasets', 'list'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: 'http://127.0.0.1:1', SVC_TOKEN: token } });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(/cannot reach/);
  });

  it('acts with a tenant key: reads work, admin operations are forbidden', () => {
    const key = svc(['keys', 'create', '--name', 'reader', '--role', 'member', '--output', 'json'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: token } }).json().token;
    const asKey = (args: string[]) => svc([...args, '--output', 'json'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: key } });
    expect(asKey(['search', 'root', '--dataset', 'ssh']).json().total.value).toBeGreaterThan(0);
    expect(asKey(['datasets', 'create', 'other']).status).toBe(4);
    expect(asKey(['keys', 'create', '--name', 'x']).status).toBe(4);
  });

  it('acts with a platform key across the tenants it provisions, asking for --tenant only where one is needed', () => {
    const key = svc(['keys', 'create', '--kind', 'platform', '--name', 'provisioner', '--output', 'json'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: token } }).json().token;
    const asKey = (args: string[]) => svc([...args, '--output', 'json', '--yes'], { dataDir: join(dir.path, 'none'), env: { SVC_URL: server.url, SVC_TOKEN: key } });
    const made = ['Customer A', 'Customer B'].map((name) => asKey(['tenants', 'create', name]).json());
    const listed = asKey(['tenants', 'list']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.json().tenants.map((t: any) => t.tenant_id)).toEqual(expect.arrayContaining(made.map((t) => t.tenant_id)));
    expect(asKey(['whoami']).status).toBe(0);
    const scoped = asKey(['datasets', 'list']);
    expect(scoped.status).toBe(2);
    expect(scoped.stderr).toMatch(/reaches \d+ tenants: choose one with --tenant/);
    expect(asKey(['--tenant', made[0].tenant_id, 'datasets', 'list']).status).toBe(0);
    expect(asKey(['tenants', 'delete', made[1].tenant_id]).json()).toMatchObject({ scope: 'tenant', status: 'pending' });
  });
});
