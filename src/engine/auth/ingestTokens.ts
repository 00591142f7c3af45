import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DiskFull, Unauthenticated } from '../errors.js';
import { now } from '../ids.js';
import { logProblem } from '../log.js';
import { SYSTEM, type Store } from '../store/db.js';
import type { Principal } from './caller.js';
import type { TokenCache } from './tokenCache.js';
import { keys } from '../store/keys.js';

export const INGEST_TOKEN_PREFIX = 'svcit.v1.';
/** A source's ingest_token_last_used_at is written at most this often, as keys' last_used_at is. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface TokenState { tenant_id: string; source_id: number; hash: string; created_at: string }

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * The one ingest token a source may have (`svcit.v1.<token id>.<secret>`), stored as a hash.
 * It authenticates direct ingestion into its own source and nothing else.
 */
export class IngestTokens {
  private readonly lastUsedWritten = new Map<string, number>();

  constructor(private readonly store: Store, private readonly cache: TokenCache) {}

  static isIngestToken(token: string): boolean {
    return token.startsWith(INGEST_TOKEN_PREFIX);
  }

  /** Mints a token for the source; call inside a write transaction. The previous token's id is returned to be revoked. */
  mint(tenantId: string, sourceId: number): { token: string; tokenId: string; created_at: string } {
    const tokenId = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const created_at = now();
    this.store.meta.put(keys.ingestToken(SYSTEM, tokenId), { tenant_id: tenantId, source_id: sourceId, hash: sha256(secret).toString('hex'), created_at } satisfies TokenState);
    return { token: `${INGEST_TOKEN_PREFIX}${tokenId}.${secret}`, tokenId, created_at };
  }

  /** Call inside a write transaction. */
  remove(tokenId: string | undefined): void {
    this.cache.clear();
    if (tokenId) this.store.meta.remove(keys.ingestToken(SYSTEM, tokenId));
  }

  verify(token: string): Principal {
    const cached = this.cache.get(token);
    if (cached) return cached;
    const parts = token.slice(INGEST_TOKEN_PREFIX.length).split('.');
    const [tokenId, secret] = parts.length === 2 ? parts : [];
    const state: TokenState | undefined = tokenId ? this.store.meta.get(keys.ingestToken(SYSTEM, tokenId)) : undefined;
    const expected = state ? Buffer.from(state.hash, 'hex') : sha256('');
    if (!timingSafeEqual(expected, sha256(secret ?? '')) || !state) throw new Unauthenticated('invalid ingest token');
    const principal: Principal = { user_id: `ingest:${state.tenant_id}:${state.source_id}`, kind: 'ingest_token', source: { tenant_id: state.tenant_id, source_id: state.source_id } };
    this.touch(tokenId!, state);
    this.cache.set(token, principal, null, () => this.touch(tokenId!, state));
    return principal;
  }

  /** Stamps the source's ingest_token_last_used_at, in the background and at most once a minute per token. */
  private touch(tokenId: string, state: TokenState): void {
    const last = this.lastUsedWritten.get(tokenId) ?? 0;
    if (Date.now() - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastUsedWritten.size >= 10_000) this.lastUsedWritten.clear();
    this.lastUsedWritten.set(tokenId, Date.now());
    this.store.meta
      .transaction(() => {
        const source = this.store.meta.get(keys.source(state.tenant_id, state.source_id));
        // only while this token is still the source's own: a rotation or revocation in between wins
        if (source?.ingest_token_id === tokenId) this.store.meta.put(keys.source(state.tenant_id, state.source_id), { ...source, ingest_token_last_used_at: now() });
      })
      .catch((err) => {
        if (!(err instanceof DiskFull)) logProblem('last_used_not_written', err, { source_id: state.source_id });
      });
  }
}
