// Hash routing: `#/search`, `#/sql`, … and `#/signin?code=…`.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: string;
  params: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const q = h.indexOf('?');
  const page = (q < 0 ? h : h.slice(0, q)) || 'search';
  return { page, params: new URLSearchParams(q < 0 ? '' : h.slice(q + 1)) };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function navigate(page: string): void {
  location.hash = `#/${page}`;
}

/** Replaces the address without a new history entry (the sign-in code must not stay in it). */
export function replaceRoute(page: string): void {
  history.replaceState(null, '', `${location.pathname}${location.search}#/${page}`);
  dispatchEvent(new HashChangeEvent('hashchange'));
}
