// Sign-in: spends the one-time code of a `svc console` link for a session cookie.
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../../api/console';
import { ApiError, post } from '../api';
import { replaceRoute } from '../router';
import { session, signInNotice, startSession } from '../session';
import { useSignal } from '../signal';

export const SESSION_ENDED = 'Your session has ended. Run `svc console` for a new sign-in link.';
const HOW = 'Run `svc console` on the machine that runs `svc serve`, then open the link it prints.';

/** Text whose `backquoted` parts are commands, shown as code (as text nodes, never HTML). */
function CodeText({ text }: { text: string }) {
  return <>{text.split('`').map((p, i) => (i % 2 ? <code key={i}>{p}</code> : p))}</>;
}

export function SignIn({ code }: { code: string | null }) {
  const notice = useSignal(signInNotice);
  const s = useSignal(session);
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({ busy: Boolean(code), error: null });

  useEffect(() => {
    if (!code) {
      if (s) replaceRoute('search');
      return;
    }
    // the code is spent once: take it out of the address at once
    history.replaceState(null, '', `${location.pathname}${location.search}#/signin`);
    post<ConsoleSession>('/v1/console/session', { code })
      .then((cs) => {
        startSession(cs);
        signInNotice.value = null;
        replaceRoute('search');
      })
      .catch((e: ApiError) => {
        const msg = e.status === 401 ? `This sign-in link has already been used or has expired. ${HOW}` : e.message;
        setState({ busy: false, error: msg });
      });
  }, [code]);

  const message = state.busy ? 'Signing in…' : (state.error ?? notice ?? HOW);
  return (
    <main class="page signin">
      <div class="card signin-card">
        <h1>svc console</h1>
        <p data-testid="signin-message" role={state.error || notice ? 'alert' : undefined} class={state.error ? 'error-text' : undefined}>
          <CodeText text={message} />
        </p>
      </div>
    </main>
  );
}
