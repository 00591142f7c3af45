import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Entry as KeyringEntry } from '@napi-rs/keyring';
import { configDir } from './paths.js';
import { normalizeUrl, readJson, writeJson } from './profiles.js';

const SERVICE = 'svc';

export type Backend = 'keyring' | 'file';

interface CredentialsFile { tokens: Record<string, string> }

export const credentialsPath = () => join(configDir(), 'credentials.json');

const account = (profile: string, url: string) => `${profile}@${normalizeUrl(url)}`;
const keyringOff = () => /^(off|false|0|no)$/i.test(process.env.SVC_KEYRING ?? '');

let keyringBroken = false;
let warmedUp = false;
let announced = false;

type Keyring = typeof import('@napi-rs/keyring');

/**
 * Runs `op` on the keyring entry, or returns `undefined` when there is no usable keyring. The
 * module is loaded lazily so a platform without a prebuilt binary still runs with the file.
 * Headless Linux (kernel keyring) refuses the first call of a process, hence one retry; and a
 * refused first *write* still leaves a copy of the secret in the user-session keyring that no
 * delete reaches, so the first call is always a read that may fail harmlessly.
 */
function viaKeyring<T>(acct: string, op: (entry: KeyringEntry) => T): { value: T } | undefined {
  if (keyringOff() || keyringBroken) return undefined;
  let keyring: Keyring;
  try {
    keyring = createRequire(import.meta.url)('@napi-rs/keyring') as Keyring;
  } catch {
    keyringBroken = true;
    return undefined;
  }
  if (!warmedUp) {
    warmedUp = true;
    try {
      new keyring.Entry(SERVICE, acct).getPassword();
    } catch {
      // expected on the kernel keyring; the retry below covers a store that keeps refusing
    }
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return { value: op(new keyring.Entry(SERVICE, acct)) };
    } catch {
      // The error text carries nothing a user could act on; the fallback notice says enough.
    }
  }
  keyringBroken = true;
  return undefined;
}

function readFile(): CredentialsFile {
  const file = readJson<Partial<CredentialsFile>>(credentialsPath(), {});
  return { tokens: file.tokens ?? {} };
}

function announce(): void {
  if (announced) return;
  announced = true;
  const why = keyringOff() ? 'SVC_KEYRING=off' : 'no OS keyring available';
  process.stderr.write(`svc: ${why}; storing the token in ${credentialsPath()} (mode 0600)\n`);
}

/** Stores the token; says where it went. */
export function saveToken(profile: string, url: string, token: string): Backend {
  const acct = account(profile, url);
  if (viaKeyring(acct, (e) => e.setPassword(token))) {
    // A token left in the file from a keyring-less day would otherwise outlive this one.
    if (existsSync(credentialsPath())) removeFromFile(acct);
    return 'keyring';
  }
  announce();
  const file = readFile();
  file.tokens[acct] = token;
  writeJson(credentialsPath(), file, 0o600);
  return 'file';
}

export function loadToken(profile: string, url: string): string | undefined {
  const acct = account(profile, url);
  const fromKeyring = viaKeyring(acct, (e) => e.getPassword());
  return fromKeyring?.value ?? readFile().tokens[acct] ?? undefined;
}

/** Forgets the token wherever it is; true if there was one. */
export function deleteToken(profile: string, url: string): boolean {
  const acct = account(profile, url);
  const fromKeyring = viaKeyring(acct, (e) => e.deleteCredential())?.value ?? false;
  return removeFromFile(acct) || fromKeyring;
}

function removeFromFile(acct: string): boolean {
  const file = readFile();
  if (!(acct in file.tokens)) return false;
  delete file.tokens[acct];
  writeJson(credentialsPath(), file, 0o600);
  return true;
}
