import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConsoleSession } from '../../api/console.js';
import { diskWrite } from '../diskErrors.js';
import { Unauthenticated } from '../errors.js';
import { SYSTEM, type Key, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { Directory } from './directory.js';
import type { Sessions } from './sessions.js';
import type { TokenCache } from './tokenCache.js';

/** How long a sign-in link printed by `svc console` can be used (once). */
export const SIGN_IN_TTL = 5 * 60;

/** Expired entries forgotten per write: a write never does more than this much upkeep. */
const FORGET_PER_WRITE = 64;

/**
 * The web console's sessions: a one-time sign-in link exchanged for a session (the same JWT a
 * bearer would carry, kept in a cookie), a CSRF token bound to that session, and sign-out, which
 * ends the session for good rather than only forgetting the cookie.
 */
export class ConsoleSessions {
  /** The session cookie's name: one per data dir, so two servers on one host keep their own. */
  readonly cookieName: string;

  constructor(
    private readonly store: Store,
    private readonly sessions: Sessions,
    private readonly directory: Directory,
    private readonly secret: Buffer,
    private readonly cache: TokenCache,
    private readonly ttlSeconds: number,
  ) {
    this.cookieName = `svc_session_${createHmac('sha256', secret).update('cookie').digest('hex').slice(0, 8)}`;
  }

  /** Spends a sign-in code: a session for its user, or 401 when it is invalid, expired or already used. */
  async exchange(code: string): Promise<{ token: string; session: ConsoleSession }> {
    const { userId, linkId, expiresAtMs } = await this.sessions.verifySignIn(code);
    if (!this.directory.user(userId)) throw new Unauthenticated('unknown user');
    const spent = await diskWrite('the sign-in', () =>
      this.store.meta.transaction(() => {
        if (this.store.meta.get(keys.signInUsed(SYSTEM, linkId)) !== undefined) return false;
        this.remember(keys.signInUsed(SYSTEM, linkId), 'signin', linkId, expiresAtMs);
        return true;
      }),
    );
    if (!spent) throw new Unauthenticated('this sign-in link was already used: run `svc console` for a new one');
    const token = await this.sessions.issue(userId, this.ttlSeconds);
    return { token, session: this.describe(token, userId, Date.now() + this.ttlSeconds * 1000) };
  }

  /** Who a session token stands for, with its CSRF token. */
  async current(token: string): Promise<ConsoleSession> {
    const { userId, sessionId, expiresAtMs } = await this.sessions.verify(token);
    this.assertNotEnded(sessionId);
    return this.describe(token, userId, expiresAtMs);
  }

  /** Ends a session: it is refused from now until it would have expired, however its token is spelled. */
  async end(token: string): Promise<void> {
    const { sessionId, expiresAtMs } = await this.sessions.verify(token);
    await diskWrite('the sign-out', () => this.store.meta.transaction(() => this.remember(keys.sessionEnded(SYSTEM, sessionId), 'session', sessionId, expiresAtMs)));
    this.cache.clear();
  }

  assertNotEnded(sessionId: string): void {
    if (this.store.meta.get(keys.sessionEnded(SYSTEM, sessionId)) !== undefined) throw new Unauthenticated('this session was signed out');
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

  /**
   * Keeps `key` while its token could still be presented, indexed by when it can go; each write
   * also forgets what has expired (oldest first, a bounded number), inside the caller's transaction.
   */
  private remember(key: Key, kind: string, id: string, expiresAtMs: number): void {
    this.store.meta.put(key, expiresAtMs);
    this.store.meta.put(keys.authExpiry(SYSTEM, expiresAtMs, kind, id), key);
    const due = { start: keys.authExpiry(SYSTEM), end: keys.authExpiry(SYSTEM, Date.now()), limit: FORGET_PER_WRITE };
    for (const { key: at, value } of [...this.store.meta.getRange(due)]) {
      this.store.meta.remove(value as Key);
      this.store.meta.remove(at);
    }
  }
}
