import { createHash, randomBytes } from 'node:crypto';
import { Unauthenticated } from '../errors.js';

const ISSUER = 'svc';
// loaded by the first session issued or checked: a local command on the data dir needs none
const jose = () => import('jose');

/** Console sessions: HS256 JWTs signed with the data dir's secret. */
export class Sessions {
  constructor(private readonly secret: Buffer) {}

  async issue(userId: string, ttlSeconds: number): Promise<string> {
    const { SignJWT } = await jose();
    return new SignJWT({ typ: 'session' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setJti(randomBytes(16).toString('base64url')) // two sessions minted in one second are still two: one can end alone
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.secret);
  }

  /** A one-time console sign-in link's code for a user: a short-lived token of its own type, with an id to spend it by. */
  async issueSignIn(userId: string, ttlSeconds: number): Promise<string> {
    const { SignJWT } = await jose();
    return new SignJWT({ typ: 'signin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setJti(randomBytes(16).toString('base64url'))
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.secret);
  }

  /** The user and link id of a valid sign-in code (it says nothing of whether the link was spent). */
  async verifySignIn(code: string): Promise<{ userId: string; linkId: string; expiresAtMs: number }> {
    const { jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(code, this.secret, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== 'signin' || typeof payload.sub !== 'string' || typeof payload.jti !== 'string') throw new Error('not a sign-in code');
      return { userId: payload.sub, linkId: payload.jti, expiresAtMs: (payload.exp ?? 0) * 1000 };
    } catch {
      throw new Unauthenticated('this sign-in link is invalid or has expired: run `svc console` for a new one');
    }
  }

  /**
   * The user a valid session stands for, when it expires, and its id: its jti, or for a session
   * signed without one, a hash of what was signed and the signature's bytes (a token can be
   * spelled several ways that all verify, so its text cannot name it).
   */
  async verify(token: string): Promise<{ userId: string; sessionId: string; expiresAtMs: number }> {
    const { jwtVerify, errors } = await jose();
    try {
      const { payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== 'session' || typeof payload.sub !== 'string') throw new Unauthenticated('invalid token');
      const [head, body, signature] = token.split('.');
      const sessionId = typeof payload.jti === 'string' ? payload.jti : createHash('sha256').update(`${head}.${body}.`).update(Buffer.from(signature, 'base64url')).digest('base64url');
      return { userId: payload.sub, sessionId, expiresAtMs: (payload.exp ?? 0) * 1000 };
    } catch (err) {
      if (err instanceof errors.JWTExpired) throw new Unauthenticated('token expired');
      if (err instanceof Unauthenticated) throw err;
      throw new Unauthenticated('invalid token');
    }
  }
}

/** "12h", "30m", "7d", "3600" (seconds) → seconds. */
export function parseTtl(ttl: string): number | null {
  const m = /^(\d+)\s*([smhdw]?)$/.exec(ttl.trim());
  if (!m) return null;
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as '' | 's'];
  const seconds = Number(m[1]) * unit;
  return seconds > 0 ? seconds : null;
}
