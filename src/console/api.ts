// The /v1 client: the session cookie, the current tenant's header and, on changes, the CSRF token.
import { session } from './session';

/** An error answer of the API, with its status and a readable message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** Readable text of an error body: `{detail: string}`, `{detail: {code, message}}` or `{detail: [{loc, msg}]}`. */
export function describeError(status: number, body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => {
        const loc = (d.loc ?? []).filter((p) => p !== 'body').join('.');
        return loc ? `${loc}: ${d.msg}` : String(d.msg);
      })
      .join('\n');
  }
  if (detail && typeof detail === 'object') {
    const d = detail as { code?: string; message?: string };
    return d.message ? (d.code ? `${d.message} (${d.code})` : d.message) : JSON.stringify(detail);
  }
  return `HTTP ${status}`;
}

let onUnauthorized: () => void = () => {};
/** What happens on any 401: the session has ended. */
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers for a call as the signed-in user of the current tenant. */
export function apiHeaders(method: string, json: boolean): Record<string, string> {
  const s = session.value;
  const h: Record<string, string> = { accept: 'application/json' };
  if (json) h['content-type'] = 'application/json';
  if (s?.tenant) h['x-service-tenant-id'] = s.tenant;
  if (s && CHANGES.has(method)) h['x-csrf-token'] = s.csrf_token;
  return h;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: apiHeaders(method, body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, `The server could not be reached (${(e as Error).message}).`, null);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (res.status === 401 && !path.startsWith('/v1/console/session')) onUnauthorized();
  if (!res.ok) throw new ApiError(res.status, describeError(res.status, parsed), parsed);
  return parsed as T;
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);

/** A path segment or query value, encoded. */
export const enc = encodeURIComponent;
