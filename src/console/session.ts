// The signed-in user: who, which tenants, the CSRF token, and the tenant the pages act in.
import type { ConsoleSession } from '../api/console';
import { signal } from './signal';

export interface Session extends ConsoleSession {
  tenant: string;
}

const TENANT_KEY = 'svc.console.tenant';

export const session = signal<Session | null>(null);
/** A message for the sign-in page (why the user is there). */
export const signInNotice = signal<string | null>(null);

export function startSession(s: ConsoleSession): void {
  const saved = localStorage.getItem(TENANT_KEY);
  const tenant = s.tenants.find((t) => t.tenant_id === saved)?.tenant_id ?? s.tenants[0]?.tenant_id ?? '';
  session.value = { ...s, tenant };
}

export function switchTenant(tenant: string): void {
  if (!session.value) return;
  localStorage.setItem(TENANT_KEY, tenant);
  session.value = { ...session.value, tenant };
}

export function endSession(notice: string | null): void {
  session.value = null;
  signInNotice.value = notice;
}

export function currentRole(): string | undefined {
  const s = session.value;
  return s?.tenants.find((t) => t.tenant_id === s.tenant)?.role;
}

export const isAdmin = (): boolean => {
  const s = session.value;
  return Boolean(s?.tenants.find((t) => t.tenant_id === s.tenant)?.is_admin);
};
