import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';

export type Json = any;
export interface Res { status: number; body: Json; headers: Record<string, string | string[] | undefined> }

/** A small HTTP client for one server, acting with one token in one tenant unless told otherwise. */
export function client(url: string, auth: { token?: string; tenant?: string } = {}) {
  async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, o: { json?: unknown; body?: string | Buffer; token?: string | null; tenant?: string | null; headers?: Record<string, string> } = {}): Promise<Res> {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? auth.token : o.token;
    const tenant = o.tenant === undefined ? auth.tenant : o.tenant;
    if (token) headers.authorization = `Bearer ${token}`;
    if (tenant) headers['x-service-tenant-id'] = tenant;
    let body: string | Buffer | undefined = o.body;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (body !== undefined) headers['content-type'] ??= 'application/octet-stream';
    const res = await request(url + path, { method, headers, body });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }
  return {
    call,
    get: (path: string, o?: Parameters<typeof call>[2]) => call('GET', path, o),
    post: (path: string, json?: unknown, o?: Parameters<typeof call>[2]) => call('POST', path, { ...o, json }),
    put: (path: string, json: unknown, o?: Parameters<typeof call>[2]) => call('PUT', path, { ...o, json }),
    del: (path: string, o?: Parameters<typeof call>[2]) => call('DELETE', path, o),
  };
}

/** Polls until `probe` returns something other than undefined, or fails at the deadline. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}
