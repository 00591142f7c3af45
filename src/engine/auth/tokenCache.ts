import type { Principal } from './caller.js';

const MAX_ENTRIES = 10_000;
const MAX_AGE_MS = 60_000;

/**
 * Verified bearer tokens, so that a token's signature or hash is checked once a minute rather than
 * on every request. Anything that revokes a credential clears it, so a revocation takes effect at once.
 */
export class TokenCache {
  private readonly entries = new Map<string, { principal: Principal; until: number; onUse?: () => void }>();

  get(token: string): Principal | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    if (hit.until <= Date.now()) {
      this.entries.delete(token);
      return undefined;
    }
    hit.onUse?.();
    return hit.principal;
  }

  /** Keeps the principal until `expiresAtMs` or a minute from now, whichever is sooner. */
  set(token: string, principal: Principal, expiresAtMs: number | null, onUse?: () => void): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(token, { principal, until: Math.min(expiresAtMs ?? Infinity, Date.now() + MAX_AGE_MS), onUse });
  }

  clear(): void {
    this.entries.clear();
  }
}
