export type Role = 'Admin' | 'Member';

/** Who acts: the authenticated principal, and the tenant and role it acts in. */
export interface Principal {
  user_id: string;
  /** how the caller proved itself: a console session (JWT), an API key, or direct access to the data dir */
  kind: 'session' | 'local' | 'tenant_key' | 'platform_key' | 'ingest_token';
  /** for an API key: the tenant it belongs to and the role it was minted with */
  key?: { id: number; tenant_id: string; role: Role };
  /** for an ingest token: the one source it may ingest into */
  source?: { tenant_id: string; source_id: number };
}

export interface Caller extends Principal {
  tenant_id: string;
  role: Role;
}
