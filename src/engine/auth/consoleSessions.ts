import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ConsoleSession } from '../../api/console.js';
import { diskWrite } from '../diskErrors.js';
import { Unauthenticated } from '../errors.js';
import { prefixRange, SYSTEM, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { Directory } from './directory.js';
import type { Sessions } from './sessions.js';
import type { TokenCache } from './tokenCache.js';

/** How long a sign-in link printed by `svc console` can be used (once). */
export const SIGN_IN_TTL = 5 * 60;

const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/**
 * The web console's sessions: a one-time sign-in link exchanged for a session (the same JWT a
 * bearer would carry, kept in a cookie), a CSRF token bound to that session, and sign-out, which
 * ends the session for good rather than only forgetting the cookie.
 */
export class ConsoleSessions {
  constructor(
    private readonly store: Store,
    private readonly sessions: Sessions,
    private readonly directory: Directory,
    private readonly secret: Buffer,
    private readonly cache: TokenCache,
    private readonly ttlSeconds: number,
  ) {}

  /** Spends a sign-in code: a session for its user, or 401 when it is invalid, expired or already used. */
  async exchange(code: string): Promise<{ token: string; session: ConsoleSession }> {
    const { userId, linkId, expiresAtMs } = await this.sessions.verifySignIn(code);
    if (!this.directory.user(userId)) throw new Unauthenticated('unknown user');
    const spent = await diskWrite('the sign-in', () =>
      this.store.meta.transaction(() => {
        if (this.store.meta.get(keys.signInUsed(SYSTEM, linkId)) !== undefined) return false;
        this.store.meta.put(keys.signInUsed(SYSTEM, linkId), expiresAtMs);
        this.forgetExpired();
        return true;
      }),
    );
    if (!spent) throw new Unauthenticated('this sign-in link was already used: run `svc console` for a new one');
    const token = await this.sessions.issue(userId, this.ttlSeconds);
    return { token, session: this.describe(token, userId, Date.now() + this.ttlSeconds * 1000) };
  }

  /** Who a session token stands for, with its CSRF token. */
  async current(token: string): Promise<ConsoleSession> {
    const { userId, expiresAtMs } = await this.sessions.verify(token);
    this.assertNotEnded(token);
    return this.describe(token, userId, expiresAtMs);
  }

  /** Ends a session: its token is refused from now until it would have expired. */
  async end(token: string): Promise<void> {
    const { expiresAtMs } = await this.sessions.verify(token);
    await diskWrite('the sign-out', () =>
      this.store.meta.transaction(() => {
        this.store.meta.put(keys.sessionEnded(SYSTEM, tokenHash(token)), expiresAtMs);
        this.forgetExpired();
      }),
    );
    this.cache.clear();
  }

  assertNotEnded(token: string): void {
    if (this.store.meta.get(keys.sessionEnded(SYSTEM, tokenHash(token))) !== undefined) throw new Unauthenticated('this session was signed out');
  }

  /** The CSRF token of a session: derived from it, so nothing is stored and it dies with the session. */
  csrf(token: string): string {
    return createHmac('sha256', this.secret).update(`csrf\0${token}`).digest('base64url');
  }

  csrfMatches(token: string, given: string): boolean {
    const want = Buffer.from(this.csrf(token));
    const got = Buffer.from(given);
    return want.length === got.length && timingSafeEqual(want, got);
  }

  private describe(token: string, userId: string, expiresAtMs: number): ConsoleSession {
    const me = this.directory.me({ user_id: userId, kind: 'session' });
    return { ...me, csrf_token: this.csrf(token), expires_at: new Date(expiresAtMs).toISOString() };
  }

  /** Spent links and ended sessions are kept only while their token could still be presented (a few per write). */
  private forgetExpired(): void {
    const now = Date.now();
    for (const kind of [keys.signInUsed, keys.sessionEnded]) {
      let n = 0;
      for (const { key, value } of this.store.meta.getRange(prefixRange(kind(SYSTEM)))) {
        if (++n > 16) break;
        if ((value as number) < now) this.store.meta.remove(key);
      }
    }
  }
}
