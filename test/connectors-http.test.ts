import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorCredentials, HttpConfig } from '../src/api/connectors.js';
import { LIMITS } from '../src/api/limits.js';
import { type HttpPage, type HttpPollOptions, type HttpStream, type HttpStreamState, HttpSyncError, httpPages, streamUrl } from '../src/engine/connectors/http/pages.js';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

/** A local API whose answer each test sets, and which keeps every request it was sent. */
class TestApi {
  server: Server;
  handler: Handler = (_req, res) => res.end();
  requests: { url: URL; headers: IncomingMessage['headers'] }[] = [];
  base = '';

  constructor() {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', this.base);
      this.requests.push({ url, headers: req.headers });
      this.handler(req, res, url);
    });
  }
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
  reset(handler: Handler): void {
    this.handler = handler;
    this.requests = [];
  }
  url(path: string): string {
    return this.base + path;
  }
}

const api = new TestApi();
const other = new TestApi(); // another origin
beforeAll(async () => {
  await api.start();
  await other.start();
});
afterAll(async () => {
  await api.stop();
  await other.stop();
});
beforeEach(() => other.reset((_req, res) => res.end()));

const OPTS: HttpPollOptions = { maxPageBytes: LIMITS.connectorPageBytes, retries: 2, retryBaseMs: 10 };
const TOKEN = 'tok-secret-1234567890';

function send(res: ServerResponse, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': type, ...headers });
  res.end(body);
}
const ndjson = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function poll(
  config: Partial<HttpConfig>,
  stream: Partial<HttpStream> = {},
  state: HttpStreamState = {},
  credentials: ConnectorCredentials = {},
  opts: Partial<HttpPollOptions> = {},
): Promise<HttpPage[]> {
  const cfg: HttpConfig = { url: api.url('/items'), ...config };
  const pages: HttpPage[] = [];
  const s: HttpStream = { url: streamUrl(cfg), incremental: false, ...stream };
  for await (const page of httpPages(cfg, s, credentials, state, { ...OPTS, ...opts })) pages.push(page);
  return pages;
}

async function failure(run: Promise<unknown>): Promise<HttpSyncError> {
  const e = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HttpSyncError);
  return e as HttpSyncError;
}

const records = (pages: HttpPage[]) => pages.flatMap((p) => p.records);

describe('formats', () => {
  it('reads NDJSON by its content type, with unreadable lines as errors of the page', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', '{"a":1}\nnot json\n\n{"a":2}\n'));
    const pages = await poll({});
    expect(pages).toHaveLength(1);
    expect(pages[0].records).toEqual([{ a: 1 }, { a: 2 }]);
    expect(pages[0].errors.map((e) => e.line)).toEqual([2]);
    expect(pages[0].url).toBe(api.url('/items'));
  });

  it('reads the JSON array at records_path; non-objects and too deep records are errors', async () => {
    let atLimit: unknown = 1;
    for (let i = 0; i < LIMITS.recordDepth; i++) atLimit = { d: atLimit };
    const tooDeep = { d: atLimit };
    api.reset((_req, res) => send(res, 'application/json; charset=utf-8', JSON.stringify({ data: { items: [{ a: 1 }, 7, atLimit, tooDeep] } })));
    const [page] = await poll({ records_path: 'data.items' });
    expect(page.records).toEqual([{ a: 1 }, atLimit]);
    expect(page.errors.map((e) => e.line)).toEqual([2, 4]);
    expect(page.errors[1].reason).toMatch(/deeper/);
  });

  it('reads a single JSON object as one record, and config.format over the content type', async () => {
    api.reset((_req, res) => send(res, 'text/plain', '{"only":true}'));
    expect(records(await poll({ format: 'json' }))).toEqual([{ only: true }]);
  });

  it('reads CSV through the ingest parser (a header row, typed cells)', async () => {
    api.reset((_req, res) => send(res, 'text/csv', 'id,name,ok\n1,alpha,true\n2,"b,eta",false\n'));
    const [page] = await poll({});
    expect(page.records).toEqual([
      { id: 1, name: 'alpha', ok: true },
      { id: 2, name: 'b,eta', ok: false },
    ]);
  });

  it('refuses a body that is not JSON when JSON is asked for', async () => {
    api.reset((_req, res) => send(res, 'application/json', '{"data": [1,'));
    await failure(poll({ records_path: 'data' }));
  });
});

describe('pagination', () => {
  it('follows next_link_path, relative links resolved against the page', async () => {
    api.reset((_req, res, url) => {
      const p = Number(url.searchParams.get('page') ?? 1);
      send(res, 'application/json', JSON.stringify({ items: [{ p }], meta: { next: p < 3 ? `items?page=${p + 1}` : null } }));
    });
    const pages = await poll({ records_path: 'items', next_link_path: 'meta.next' });
    expect(records(pages)).toEqual([{ p: 1 }, { p: 2 }, { p: 3 }]);
    expect(pages.map((p) => p.url)).toEqual([api.url('/items'), api.url('/items?page=2'), api.url('/items?page=3')]);
  });

  it('follows a Link rel="next" header', async () => {
    api.reset((_req, res, url) => {
      const p = Number(url.searchParams.get('page') ?? 1);
      const link: Record<string, string> = p < 2 ? { link: `<${api.url('/items?page=2')}>; rel="next", <${api.url('/items')}>; rel="first"` } : {};
      send(res, 'application/x-ndjson', ndjson([{ p }]), link);
    });
    const pages = await poll({});
    expect(records(pages)).toEqual([{ p: 1 }, { p: 2 }]);
    expect(api.requests).toHaveLength(2);
  });

  it('stops at max_pages', async () => {
    api.reset((_req, res, url) => {
      const p = Number(url.searchParams.get('page') ?? 1);
      send(res, 'application/x-ndjson', ndjson([{ p }]), { link: `</items?page=${p + 1}>; rel="next"`, etag: '"v1"' });
    });
    const pages = await poll({ max_pages: 3 });
    expect(pages).toHaveLength(3);
    expect(api.requests).toHaveLength(3);
    // the listing was not read whole: its ETag must not make the next call skip the rest
    expect(pages[2].state.etag).toBeNull();
  });

  it('stops when a next link leads back to a page already read', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', ndjson([{ a: 1 }]), { link: '</items>; rel="next"' }));
    expect(await poll({})).toHaveLength(1);
  });

  it('follows a redirect, and sends credentials to the first origin only', async () => {
    other.reset((_req, res) => send(res, 'application/x-ndjson', ndjson([{ from: 'other' }])));
    api.reset((_req, res, url) => {
      if (url.pathname === '/items') res.writeHead(302, { location: '/moved' }).end();
      else res.writeHead(302, { location: other.url('/elsewhere') }).end();
    });
    const pages = await poll({ headers: { 'X-Public': 'p' } }, {}, {}, { bearer_token: TOKEN });
    expect(records(pages)).toEqual([{ from: 'other' }]);
    expect(pages[0].url).toBe(other.url('/elsewhere'));
    expect(api.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN}`]);
    expect(other.requests[0].headers.authorization).toBeUndefined();
    expect(other.requests[0].headers['x-public']).toBe('p');
  });
});

describe('cursor', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: i + 1, ts: `2024-01-${String(i + 1).padStart(2, '0')}T00:00:00Z` }));

  it('pages by cursor_param (keyset), then a later call gets only newer records', async () => {
    let data = rows(7);
    api.reset((_req, res, url) => {
      const since = url.searchParams.get('since');
      const page = data.filter((r) => since === null || r.ts > since).slice(0, 3);
      send(res, 'application/x-ndjson', ndjson(page));
    });
    const config = { cursor_param: 'since', cursor_field: 'ts' };
    const first = await poll(config, { incremental: true });
    expect(records(first).map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(api.requests.map((r) => r.url.searchParams.get('since'))).toEqual([null, data[2].ts, data[5].ts, data[6].ts]);
    // every page commits its cursor: a crash after page 1 resumes past record 3
    expect(first.map((p) => p.state.cursor)).toEqual([data[2].ts, data[5].ts, data[6].ts, data[6].ts]);

    data = rows(9);
    api.requests = [];
    const second = await poll(config, { incremental: true }, first[first.length - 1].state);
    expect(records(second).map((r) => r.id)).toEqual([8, 9]);
    expect(api.requests[0].url.searchParams.get('since')).toBe(data[6].ts);
    expect(second[second.length - 1].state.cursor).toBe(data[8].ts);
  });

  it('stops keyset paging when the server ignores the cursor (the cursor does not move)', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', ndjson(rows(3))));
    const pages = await poll({ cursor_param: 'since', cursor_field: 'ts' }, { incremental: true });
    expect(records(pages).map((r) => r.id)).toEqual([1, 2, 3]);
    expect(api.requests).toHaveLength(2);
  });

  it('drops records at or below the cursor when incremental; numbers compare as numbers', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', ndjson([{ n: 9 }, { n: 10 }, { n: 2 }, { other: 1 }, { n: 11 }])));
    const pages = await poll({ cursor_field: 'n' }, { incremental: true }, { cursor: 9 });
    expect(records(pages)).toEqual([{ n: 10 }, { other: 1 }, { n: 11 }]);
    expect(pages[0].state.cursor).toBe(11);
  });

  it('compares ISO timestamps as strings and reads a dotted cursor field', async () => {
    api.reset((_req, res) =>
      send(res, 'application/x-ndjson', ndjson([{ m: { at: '2024-03-01T00:00:00Z' } }, { m: { at: '2024-01-01T00:00:00Z' } }, { m: { at: '2024-02-01T00:00:00Z' } }])),
    );
    const pages = await poll({}, { incremental: true, cursor_field: 'm.at' }, { cursor: '2024-01-15T00:00:00Z' });
    expect(records(pages).map((r) => (r.m as { at: string }).at)).toEqual(['2024-03-01T00:00:00Z', '2024-02-01T00:00:00Z']);
    expect(pages[0].state.cursor).toBe('2024-03-01T00:00:00Z');
  });

  it('full_refresh keeps every record and sends no cursor on the first request', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', ndjson([{ n: 1 }, { n: 5 }])));
    const pages = await poll({ cursor_field: 'n', cursor_param: 'after' }, { incremental: false }, { cursor: 3 });
    expect(records(pages)).toEqual([{ n: 1 }, { n: 5 }]);
    expect(api.requests[0].url.searchParams.has('after')).toBe(false);
    expect(pages[pages.length - 1].state.cursor).toBe(3);
  });

  it('keeps the cursor of next-link pages until the listing is read whole', async () => {
    // newest first: committing page 1's highest value would skip page 2 after a crash
    api.reset((_req, res, url) => {
      const p = Number(url.searchParams.get('page') ?? 1);
      send(res, 'application/x-ndjson', ndjson(p === 1 ? [{ n: 9 }, { n: 8 }] : [{ n: 7 }]), p === 1 ? { link: '</items?page=2>; rel="next"' } : {});
    });
    const pages = await poll({ cursor_field: 'n' }, { incremental: true }, { cursor: 1 });
    expect(pages.map((p) => p.state.cursor)).toEqual([1, 9]);
  });
});

describe('etag', () => {
  it('sends If-None-Match; a 304 yields nothing', async () => {
    api.reset((req, res) => {
      if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304).end();
      send(res, 'application/x-ndjson', ndjson([{ a: 1 }]), { etag: '"v1"' });
    });
    const first = await poll({});
    expect(first[0].state.etag).toBe('"v1"');
    expect(await poll({}, {}, first[0].state)).toEqual([]);
    expect(api.requests).toHaveLength(2);
    expect(api.requests[1].headers['if-none-match']).toBe('"v1"');
  });

  it('puts the new ETag only into the last page, and sends If-None-Match on the first request only', async () => {
    api.reset((_req, res, url) => {
      const p = Number(url.searchParams.get('page') ?? 1);
      send(res, 'application/x-ndjson', ndjson([{ p }]), p === 1 ? { etag: '"v2"', link: '</items?page=2>; rel="next"' } : { etag: '"page2"' });
    });
    const pages = await poll({}, {}, { etag: '"v1"' });
    expect(pages.map((p) => p.state.etag)).toEqual(['"v1"', '"v2"']);
    expect(api.requests.map((r) => r.headers['if-none-match'])).toEqual(['"v1"', undefined]);
  });

  it('yields one empty page for an empty first answer, so its ETag can be committed', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', '', { etag: '"empty"' }));
    const pages = await poll({});
    expect(pages).toHaveLength(1);
    expect(pages[0].records).toEqual([]);
    expect(pages[0].state.etag).toBe('"empty"');
  });
});

describe('failures', () => {
  it('retries a 500 and succeeds', async () => {
    api.reset((_req, res) => {
      if (api.requests.length <= 2) return void res.writeHead(500).end();
      send(res, 'application/x-ndjson', ndjson([{ ok: 1 }]));
    });
    expect(records(await poll({}))).toEqual([{ ok: 1 }]);
    expect(api.requests).toHaveLength(3);
  });

  it('retries a 429 after its Retry-After', async () => {
    api.reset((_req, res) => {
      if (api.requests.length === 1) return void res.writeHead(429, { 'retry-after': '0' }).end();
      send(res, 'application/x-ndjson', ndjson([{ ok: 1 }]));
    });
    expect(records(await poll({}))).toEqual([{ ok: 1 }]);
    expect(api.requests).toHaveLength(2);
  });

  it('fails with the status after retries + 1 attempts of a permanent 500', async () => {
    api.reset((_req, res) => void res.writeHead(500).end());
    const e = await failure(poll({}, {}, {}, { bearer_token: TOKEN }, { retries: 3 }));
    expect(e.status).toBe(500);
    expect(e.url).toBe(api.url('/items'));
    expect(e.message).toContain(api.url('/items'));
    expect(e.message).toContain('HTTP 500');
    expect(e.message).not.toContain(TOKEN);
    expect(api.requests).toHaveLength(4);
  });

  it('fails at once on a 4xx other than 429', async () => {
    api.reset((_req, res) => void res.writeHead(404).end());
    const e = await failure(poll({}));
    expect(e.status).toBe(404);
    expect(api.requests).toHaveLength(1);
  });

  it('retries a request that gets no answer in timeout_ms, then fails', async () => {
    api.reset(() => undefined); // never answers
    const e = await failure(poll({ timeout_ms: 200 }, {}, {}, {}, { retries: 1 }));
    expect(e.message).toMatch(/within 200 ms/);
    expect(api.requests).toHaveLength(2);
  });

  it('times out a body that never ends (the timeout covers the body)', async () => {
    api.reset((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"a":1}\n'); // and never ends
    });
    const e = await failure(poll({ timeout_ms: 200 }, {}, {}, {}, { retries: 0 }));
    expect(e.message).toMatch(/within 200 ms/);
  });

  it('refuses a page larger than maxPageBytes without retrying', async () => {
    api.reset((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(ndjson(Array.from({ length: 200 }, (_, i) => ({ i, pad: 'x'.repeat(50) }))));
    });
    const e = await failure(poll({}, {}, {}, {}, { maxPageBytes: 1000 }));
    expect(e.message).toMatch(/larger than 1000 bytes/);
    expect(api.requests).toHaveLength(1);
  });

  it('refuses a page whose Content-Length passes maxPageBytes', async () => {
    api.reset((_req, res) => send(res, 'application/x-ndjson', ndjson([{ pad: 'x'.repeat(2000) }])));
    const e = await failure(poll({}, {}, {}, {}, { maxPageBytes: 1000 }));
    expect(e.message).toMatch(/larger than 1000 bytes/);
    expect(api.requests).toHaveLength(1);
  });

  it('a cancel while a 503 asks to wait ends the sync at once', async () => {
    const cancel = new AbortController();
    api.reset((_req, res) => {
      res.writeHead(503, { 'retry-after': '60' }).end();
      cancel.abort(new Error('sync cancelled'));
    });
    await expect(poll({}, {}, {}, {}, { signal: cancel.signal })).rejects.toThrow('sync cancelled');
    expect(api.requests).toHaveLength(1);
  });

  it('stops on a cancel without retrying', async () => {
    const cancel = new AbortController();
    api.reset(() => cancel.abort(new Error('sync cancelled'))); // and no answer
    await expect(poll({}, {}, {}, {}, { signal: cancel.signal })).rejects.toThrow('sync cancelled');
    expect(api.requests).toHaveLength(1);
  });
});

describe('request', () => {
  it('sends config headers, credential headers and the bearer token; a failure does not show them', async () => {
    api.reset((_req, res) => void res.writeHead(401).end());
    const credentials = { bearer_token: TOKEN, headers: { 'X-Api-Key': 'key-secret-42' } };
    const e = await failure(poll({ headers: { 'X-Client': 'svc', 'X-Api-Key': 'public' } }, {}, {}, credentials));
    const h = api.requests[0].headers;
    expect(h.authorization).toBe(`Bearer ${TOKEN}`);
    expect(h['x-api-key']).toBe('key-secret-42');
    expect(h['x-client']).toBe('svc');
    expect(e.status).toBe(401);
    expect(e.message).not.toContain(TOKEN);
    expect(e.message).not.toContain('key-secret-42');
  });

  it('resolves a stream name against the config url, or takes an absolute URL', () => {
    const config: HttpConfig = { url: 'https://api.example.com/v1/' };
    expect(streamUrl(config)).toBe('https://api.example.com/v1/');
    expect(streamUrl(config, 'events?x=1')).toBe('https://api.example.com/v1/events?x=1');
    expect(streamUrl(config, '/other')).toBe('https://api.example.com/other');
    expect(streamUrl(config, 'http://elsewhere.example/feed')).toBe('http://elsewhere.example/feed');
    expect(() => streamUrl(config, 'ftp://x/y')).toThrow();
  });
});
