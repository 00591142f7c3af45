import type { ConnectorCredentials, HttpConfig } from '../../../api/connectors.js';
import { LIMITS } from '../../../api/limits.js';
import { pageFormat, readPageBody } from './body.js';
import { compareCursors, type Cursor, cursorOf, maxCursor } from './cursor.js';
import { HttpSyncError } from './error.js';
import { fetchPage } from './fetch.js';
import { nextFromLinkHeader, resolveUrl } from './link.js';

export { HttpSyncError };

export interface HttpStreamState {
  /** ETag of the first page's last 200 answer: sent as If-None-Match; a 304 means nothing new */
  etag?: string | null;
  /** highest cursor_field value handed out so far (incremental) */
  cursor?: string | number | null;
}

export interface HttpPage {
  /** where the page came from, after redirects */
  url: string;
  /** the page's records (plain JSON objects), already past the cursor filter */
  records: Record<string, unknown>[];
  /** records of the page that could not be read: a CSV/NDJSON line, or a JSON item's 1-based position */
  errors: { line: number; reason: string }[];
  /** the state to commit once this page's records are stored: a crash after page N resumes after page N */
  state: HttpStreamState;
}

export interface HttpStream {
  url: string;
  incremental: boolean;
  cursor_field?: string;
}

export interface HttpPollOptions {
  maxPageBytes: number;
  retries: number;
  retryBaseMs: number;
  signal?: AbortSignal;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_PAGES = 100;

/** A stream's URL: its name is a path resolved against config.url (WHATWG rules), or an absolute http(s) URL. */
export function streamUrl(config: HttpConfig, name?: string): string {
  if (name === undefined) return config.url;
  const url = resolveUrl(name, config.url);
  if (url === undefined) throw new Error(`stream '${name}' names no http(s) URL`);
  return url;
}

/**
 * The pages of one stream, in order, until the listing ends or max_pages is reached.
 *
 * Each page's state is safe to commit once its records are stored. What a crash could make
 * skip stays behind until the listing has been read whole: the new ETag, and (when pages
 * follow next links, whose order is the server's) the new cursor. Keyset pages (cursor_param)
 * ask for records past the cursor, so their order is ascending and each commits its cursor.
 */
export async function* httpPages(
  config: HttpConfig,
  stream: HttpStream,
  credentials: ConnectorCredentials,
  state: HttpStreamState,
  opts: HttpPollOptions,
): AsyncGenerator<HttpPage> {
  const cursorField = stream.cursor_field ?? config.cursor_field;
  const incremental = stream.incremental && cursorField !== undefined;
  const keysetParam = cursorField !== undefined ? config.cursor_param : undefined;
  const maxPages = Math.min(config.max_pages ?? DEFAULT_MAX_PAGES, LIMITS.connectorPages);
  const { headers, secretHeaders } = requestHeaders(config, credentials);
  const oldEtag = state.etag ?? null;
  /** records at or below it were handed out by an earlier call */
  const floor: Cursor | undefined = incremental ? (state.cursor ?? undefined) : undefined;
  let committed: Cursor | null = state.cursor ?? null;
  let seen = floor;
  /** this request's floor: a keyset page's is the cursor it asked past (a server that ignores it sends nothing twice) */
  let pageFloor = floor;
  let newEtag: string | null = null;
  let askedCursor = keysetParam !== undefined ? floor : undefined;
  let url = withCursor(stream.url, keysetParam, askedCursor);
  const visited = new Set<string>();

  for (let n = 0; n < maxPages; n++) {
    opts.signal?.throwIfAborted();
    visited.add(url);
    const fetched = await fetchPage({
      url,
      headers,
      secretHeaders,
      credentialOrigin: new URL(config.url).origin,
      ifNoneMatch: n === 0 ? (state.etag ?? undefined) : undefined,
      timeoutMs: config.timeout_ms ?? DEFAULT_TIMEOUT_MS,
      maxPageBytes: opts.maxPageBytes,
      retries: opts.retries,
      retryBaseMs: opts.retryBaseMs,
      signal: opts.signal,
    });
    if (fetched.status === 304) return;
    if (n === 0) newEtag = headerText(fetched.headers.etag) ?? null;
    const body = await readPageBody(fetched.body, pageFormat(config, fetched.headers['content-type']), config, fetched.url);

    const records: Record<string, unknown>[] = [];
    for (const record of body.records) {
      const c = cursorField !== undefined ? cursorOf(record, cursorField) : undefined;
      seen = maxCursor(seen, c);
      if (pageFloor === undefined || c === undefined || compareCursors(c, pageFloor) > 0) records.push(record);
    }

    let next = body.nextLink ?? nextFromLinkHeader(fetched.headers.link, fetched.url);
    let keyset = false;
    // keyset: ask past the highest value seen, unless the cursor did not move (an empty page, or only old records)
    if (next === undefined && keysetParam !== undefined && seen !== undefined && (askedCursor === undefined || compareCursors(seen, askedCursor) > 0)) {
      askedCursor = seen;
      next = withCursor(stream.url, keysetParam, seen);
      keyset = true;
    }
    if (next !== undefined && visited.has(next)) next = undefined;
    const last = next === undefined || n + 1 === maxPages;
    if (incremental && (last || keyset)) committed = seen ?? committed;
    // the new ETag only once the listing was read whole: a 304 next time must not hide unread pages
    const etag = next === undefined ? newEtag : oldEtag;
    yield { url: fetched.url, records, errors: body.errors, state: { etag, cursor: committed } };
    if (last) return;
    pageFloor = keyset ? askedCursor : floor;
    url = next!;
  }
}

/** Config headers, then credential headers, then the bearer token; names folded so a later one replaces an earlier. */
function requestHeaders(config: HttpConfig, credentials: ConnectorCredentials): { headers: Record<string, string>; secretHeaders: Record<string, string> } {
  const lower = (h: Record<string, string> | undefined) => Object.fromEntries(Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const secretHeaders = lower(credentials.headers);
  if (credentials.bearer_token) secretHeaders.authorization = `Bearer ${credentials.bearer_token}`;
  const headers = lower(config.headers);
  for (const name of Object.keys(secretHeaders)) delete headers[name];
  return { headers, secretHeaders };
}

function withCursor(url: string, param: string | undefined, cursor: Cursor | undefined): string {
  if (param === undefined || cursor === undefined) return url;
  const u = new URL(url);
  u.searchParams.set(param, String(cursor));
  return u.href;
}

function headerText(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
