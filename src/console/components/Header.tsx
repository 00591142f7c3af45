// The header: nav links, tenant switcher, the user's e-mail and sign-out.
import { ApiError, del } from '../api';
import { replaceRoute } from '../router';
import { endSession, session, switchTenant } from '../session';
import { useSignal } from '../signal';

export const LINKS: [string, string][] = [
  ['search', 'Search'],
  ['sql', 'SQL'],
  ['datasets', 'Datasets'],
  ['views', 'Views'],
  ['exports', 'Exports'],
  ['detections', 'Detections'],
  ['jobs', 'Jobs'],
  ['keys', 'Keys'],
];

export function Header({ page }: { page: string }) {
  const s = useSignal(session);
  if (!s) return null;
  const signOut = async () => {
    try {
      await del('/v1/console/session');
    } catch (e) {
      // a 401 means the session had ended already; anything else leaves it alive, and says so
      if (!(e instanceof ApiError && e.status === 401)) {
        window.alert(`Sign-out failed, the session is still valid: ${(e as Error).message}`);
        return;
      }
    }
    endSession('You have signed out. Run `svc console` for a new sign-in link.');
    replaceRoute('signin');
  };
  return (
    <header class="top">
      <a class="brand" href="#/search">svc</a>
      <nav aria-label="Pages">
        {LINKS.map(([id, label]) => (
          <a key={id} href={`#/${id}`} data-testid={`nav-${id}`} aria-current={page === id ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <div class="who">
        {s.tenants.length > 1 ? (
          <label class="inline">
            <span>Tenant</span>
            <select data-testid="tenant-switcher" value={s.tenant} onChange={(e) => switchTenant((e.target as HTMLSelectElement).value)}>
              {s.tenants.map((t) => (
                <option key={t.tenant_id} value={t.tenant_id}>
                  {t.name} ({t.role})
                </option>
              ))}
            </select>
          </label>
        ) : (
          <span class="muted">{s.tenants[0] ? `${s.tenants[0].name} (${s.tenants[0].role})` : 'no tenant'}</span>
        )}
        <span data-testid="user-email">{s.email}</span>
        <button type="button" data-testid="signout" onClick={signOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}
