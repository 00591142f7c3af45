import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Entry } from '@napi-rs/keyring';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tempDir } from './helpers/cli.js';

const URL_ = 'http://127.0.0.1:7360';
const NOTICE = /storing the token in .*credentials\.json \(mode 0600\)/;

/** A fresh module per test, so "announced once per process" starts over. */
const load = async () => {
  vi.resetModules();
  return import('../src/cli/credentials.js');
};

describe('credentials', () => {
  let dir: ReturnType<typeof tempDir>;
  let stderr: string[];
  const env = { ...process.env };

  beforeEach(() => {
    dir = tempDir('svc-cred-');
    process.env.XDG_CONFIG_HOME = dir.path;
    stderr = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: any) => (stderr.push(String(chunk)), true));
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.env = { ...env };
    dir.remove();
  });

  it('keeps tokens in a 0600 file in a 0700 dir with SVC_KEYRING=off, announced once', async () => {
    process.env.SVC_KEYRING = 'off';
    const c = await load();
    const file = join(dir.path, 'svc', 'credentials.json');
    expect(c.loadToken('default', URL_)).toBeUndefined();
    expect(c.saveToken('default', URL_, 'tok-1')).toBe('file');
    expect(c.saveToken('staging', URL_ + '/', 'tok-2')).toBe('file');
    expect(c.loadToken('default', URL_ + '/')).toBe('tok-1');
    expect(c.loadToken('staging', URL_)).toBe('tok-2');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, 'svc')).mode & 0o777).toBe(0o700);
    expect(stderr.filter((l) => NOTICE.test(l))).toHaveLength(1);
    expect(stderr.join('')).not.toContain('tok-');

    expect(c.deleteToken('default', URL_)).toBe(true);
    expect(c.deleteToken('default', URL_)).toBe(false);
    expect(c.loadToken('default', URL_)).toBeUndefined();
    expect(c.loadToken('staging', URL_)).toBe('tok-2');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('uses the OS keyring when one works, else falls back to the file', async () => {
    delete process.env.SVC_KEYRING;
    const c = await load();
    const profile = `test-${process.pid}-${Date.now()}`;
    const file = join(dir.path, 'svc', 'credentials.json');
    const where = c.saveToken(profile, URL_, 'tok-k');
    console.info(`credentials backend in this environment: ${where}`);
    try {
      expect(c.loadToken(profile, URL_)).toBe('tok-k');
      if (where === 'keyring') {
        expect(existsSync(file)).toBe(false);
        expect(stderr.some((l) => NOTICE.test(l))).toBe(false);
        expect(readKeyring(`${profile}@${URL_}`)).toBe('tok-k');
        expect(liveKernelKeys(`${profile}@${URL_}`)).toBeLessThanOrEqual(1);
      } else {
        expect(JSON.parse(readFileSync(file, 'utf8')).tokens[`${profile}@${URL_}`]).toBe('tok-k');
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(stderr.filter((l) => l.includes('no OS keyring available'))).toHaveLength(1);
      }
    } finally {
      expect(c.deleteToken(profile, URL_)).toBe(true);
    }
    expect(c.loadToken(profile, URL_)).toBeUndefined();
    expect(liveKernelKeys(`${profile}@${URL_}`)).toBe(0);
  });
});

/**
 * Copies of the secret still live in the kernel keyring (0 where that is not the store). A first
 * write refused by the kernel keyring leaves a copy behind that delete cannot reach.
 */
function liveKernelKeys(account: string): number {
  if (!existsSync('/proc/keys')) return 0;
  return readFileSync('/proc/keys', 'utf8')
    .split('\n')
    .filter((line) => line.includes(`${account}@svc:`) && !/[RDi]/.test(line.split(/\s+/)[1] ?? ''))
    .length;
}

/** Straight from the keyring, bypassing the module; the first call of a process may be refused. */
function readKeyring(account: string): string | null {
  try {
    return new Entry('svc', account).getPassword();
  } catch {
    return new Entry('svc', account).getPassword();
  }
}
