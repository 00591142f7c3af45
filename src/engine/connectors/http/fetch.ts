import { setTimeout as sleep } from 'node:timers/promises';
import { HttpSyncError } from './error.js';
import { resolveUrl } from './link.js';

export interface FetchRequest {
  url: string;
  /** sent on every hop of a redirect */
  headers: Record<string, string>;
  /** sent only to this origin (the connector's own URL's): a redirect or a next link elsewhere must not carry secrets */
  secretHeaders: Record<string, string>;
  credentialOrigin: string;
  ifNoneMatch?: string;
  timeoutMs: number;
  maxPageBytes: number;
  retries: number;
  retryBaseMs: number;
  signal?: AbortSignal;
}

export interface FetchedPage {
  /** where the body came from, after redirects: relative next links resolve against it */
  url: string;
  /** 200-299, or 304 when If-None-Match was sent */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export const MAX_REDIRECTS = 5;
/** a Retry-After longer than this is a server asking for more patience than a sync has */
export const MAX_RETRY_AFTER_MS = 60_000;

type Failure = { reason: string; status?: number; waitMs?: number };

/**
 * One page: GET with retries of what may pass (network errors, timeouts, 429, 5xx), each with
 * backoff. A refusal (another 4xx), an oversize body or a cancel ends at once.
 */
export async function fetchPage(req: FetchRequest): Promise<FetchedPage> {
  let last: Failure = { reason: 'no attempt' };
  for (let n = 0; n <= req.retries; n++) {
    if (n > 0) await pause(last.waitMs ?? req.retryBaseMs * 2 ** (n - 1), req.signal);
    const outcome = await attempt(req);
    if ('body' in outcome) return outcome;
    last = outcome;
  }
  const attempts = req.retries + 1;
  throw new HttpSyncError(`GET ${req.url} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${last.reason}`, req.url, last.status);
}

/** A wait a cancel cuts short, ending with the cancel's own reason as every other cancel does. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch (e) {
    signal?.throwIfAborted();
    throw e;
  }
}

/** One attempt, redirects included, all within one timeout. */
async function attempt(req: FetchRequest): Promise<FetchedPage | Failure> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const origin = req.credentialOrigin;
  let url = req.url;
  try {
    for (let hop = 0; ; hop++) {
      const headers = { ...req.headers, ...(new URL(url).origin === origin ? req.secretHeaders : {}) };
      if (req.ifNoneMatch !== undefined) headers['if-none-match'] = req.ifNoneMatch;
      // timeouts of undici's own as well, so that no default of its outlives the signal's
      const { request } = await import('undici'); // loaded when first used: most commands never sync a connector
      const res = await request(url, { method: 'GET', headers, signal, headersTimeout: req.timeoutMs, bodyTimeout: req.timeoutMs });
      const status = res.statusCode;
      if ((status >= 200 && status < 300) || (status === 304 && req.ifNoneMatch !== undefined)) {
        if (Number(res.headers['content-length']) > req.maxPageBytes) {
          await res.body.dump().catch(() => undefined);
          throw tooLarge(url, req.maxPageBytes, status);
        }
        return { url, status, headers: res.headers, body: await readBounded(res.body, req.maxPageBytes, url, status) };
      }
      await res.body.dump().catch(() => undefined);
      if (status >= 300 && status < 400 && res.headers.location !== undefined) {
        const next = resolveUrl(String(res.headers.location), url);
        if (next === undefined) throw new HttpSyncError(`GET ${req.url}: HTTP ${status} redirects to no http(s) URL`, req.url, status);
        if (hop >= MAX_REDIRECTS) throw new HttpSyncError(`GET ${req.url}: more than ${MAX_REDIRECTS} redirects`, req.url, status);
        url = next;
        continue;
      }
      if (status === 429 || status >= 500) return { reason: `HTTP ${status}`, status, waitMs: retryAfterMs(status, res.headers['retry-after']) };
      throw new HttpSyncError(`GET ${req.url}: HTTP ${status}`, req.url, status);
    }
  } catch (e) {
    if (req.signal?.aborted) throw req.signal.reason;
    if (e instanceof HttpSyncError) throw e;
    if (timeout.aborted) return { reason: `no complete answer within ${req.timeoutMs} ms` };
    if ((e as { code?: string }).code === 'UND_ERR_INVALID_ARG') throw new HttpSyncError(`GET ${req.url}: ${(e as Error).message}`, req.url);
    return { reason: (e as Error).message || String(e) };
  }
}

/** The body, refused once it passes `max` bytes: the rest is never read. */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }, max: number, url: string, status: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw tooLarge(url, max, status);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

function tooLarge(url: string, max: number, status: number): HttpSyncError {
  return new HttpSyncError(`GET ${url}: page larger than ${max} bytes`, url, status);
}

/** Retry-After of a 429 or 503, in seconds only (an HTTP date is rare from APIs and is left to backoff). */
function retryAfterMs(status: number, header: string | string[] | undefined): number | undefined {
  if (status !== 429 && status !== 503) return undefined;
  const text = Array.isArray(header) ? header[0] : header;
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
}
