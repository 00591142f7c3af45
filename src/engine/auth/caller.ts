import { Forbidden } from '../errors.js';

export type Role = 'Admin' | 'Member';

/** Who acts: the authenticated principal, and the tenant and role it acts in. */
export interface Principal {
  user_id: string;
  /** how the caller proved itself: a console session (JWT) or direct access to the data dir */
  kind: 'session' | 'local';
}

export interface Caller extends Principal {
  tenant_id: string;
  role: Role;
}

export function requireAdmin(caller: Caller): void {
  if (caller.role !== 'Admin') throw new Forbidden('this operation requires the Admin role');
}
