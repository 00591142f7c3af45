// The shell: restores the session, routes, and sends any ended session back to sign-in.
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../api/console';
import { get, setUnauthorizedHandler } from './api';
import { Header, LINKS } from './components/Header';
import { useRoute, replaceRoute } from './router';
import { endSession, session, startSession } from './session';
import { useSignal } from './signal';
import { SignIn, SESSION_ENDED } from './pages/SignIn';
import { SearchPage } from './pages/Search';
import { SqlPage } from './pages/Sql';
import { DatasetsPage } from './pages/Datasets';
import { KeysPage } from './pages/Keys';
import { ViewsPage } from './pages/Views';
import { ExportsPage } from './pages/Exports';
import { DetectionsPage } from './pages/Detections';
import { JobsPage } from './pages/Jobs';

const PAGES: Record<string, () => preact.JSX.Element> = {
  search: SearchPage,
  sql: SqlPage,
  datasets: DatasetsPage,
  keys: KeysPage,
  views: ViewsPage,
  exports: ExportsPage,
  detections: DetectionsPage,
  jobs: JobsPage,
};

setUnauthorizedHandler(() => {
  if (session.value) endSession(SESSION_ENDED);
  replaceRoute('signin');
});

export function App() {
  const route = useRoute();
  const s = useSignal(session);
  const [restoring, setRestoring] = useState(true);

  useEffect(() => {
    if (route.page === 'signin' && route.params.get('code')) {
      setRestoring(false);
      return;
    }
    get<ConsoleSession>('/v1/console/session')
      .then((cs) => startSession(cs))
      .catch(() => endSession(null))
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return <main class="page" aria-busy="true"><p class="muted">Loading…</p></main>;
  if (!s || route.page === 'signin') {
    document.title = 'Sign in · svc console';
    return <SignIn code={route.params.get('code')} />;
  }

  const Page = PAGES[route.page] ?? SearchPage;
  document.title = `${LINKS.find(([id]) => id === route.page)?.[1] ?? 'Search'} · svc console`;
  return (
    <>
      <Header page={route.page} />
      <main class="page" key={`${s.tenant}`}>
        <Page />
      </main>
    </>
  );
}
