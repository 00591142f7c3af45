import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_KINDS, errorFromStatus, exitCodeOf, httpStatusOf, Refused } from '../src/engine/errors.js';
import { init, serve, svc, svcAsync, tempDir, type Server } from './helpers/cli.js';
import { client } from './helpers/http.js';
import { rawRequest } from './helpers/raw.js';

/** What README's "Exit codes" promises for each HTTP status: the table in src must agree. */
const DOCUMENTED_EXIT: Record<number, number> = { 400: 2, 401: 4, 403: 4, 404: 3, 409: 1, 413: 2, 422: 2, 500: 1, 503: 1, 507: 6 };

// a floor above any disk's free space: every write of data meets it (reads and dataset creation go on)
const FLOOR_ABOVE_FREE = { SVC_MIN_FREE_BYTES: String(2 ** 60) };

describe('the error table', () => {
  it('gives each kind one status and one exit code, and reads that status back as the same kind', () => {
    expect(ERROR_KINDS.map((k) => k.status).sort()).toEqual(Object.keys(DOCUMENTED_EXIT).map(Number).sort());
    for (const k of ERROR_KINDS) {
      const err = errorFromStatus(k.status, 'm', 'c');
      expect(err, k.kind).toBeInstanceOf(k.type);
      expect([httpStatusOf(err), exitCodeOf(err)], k.kind).toEqual([k.status, DOCUMENTED_EXIT[k.status]]);
    }
  });

  it('maps a Refused by its own status, other errors and statuses to their nearest kind', () => {
    for (const status of [400, 409, 413, 422] as const) {
      expect([httpStatusOf(new Refused('m', 'c', status)), exitCodeOf(new Refused('m', 'c', status))]).toEqual([status, DOCUMENTED_EXIT[status]]);
    }
    expect([httpStatusOf(new TypeError('x')), exitCodeOf(new TypeError('x'))]).toEqual([500, 1]);
    // any 4xx is a request the server would not take as sent; 429 and a gateway's 502 mean "not now"
    expect([414, 415, 431].map((s) => exitCodeOf(errorFromStatus(s, 'm')))).toEqual([2, 2, 2]);
    expect([429, 502, 504].map((s) => httpStatusOf(errorFromStatus(s, 'm')))).toEqual([503, 503, 503]);
    expect(errorFromStatus(422, 'm', undefined, [{ loc: ['body', 'q'], msg: 'bad', type: 'x' }])).toMatchObject({ issues: [{ loc: ['body', 'q'] }] });
  });
});

describe('one failure, one status and one exit code: server, local CLI, remote CLI', () => {
  const dir = tempDir('svc-errors-');
  const [localDir, remoteDir, none] = ['local', 'remote', 'none'].map((d) => join(dir.path, d));
  let server: Server;
  let admin: ReturnType<typeof init>;
  let member = '';
  const api = (token?: string) => client(server.url, { token: token ?? admin.token, tenant: admin.tenant_id });
  const local = (args: string[], env: Record<string, string> = {}) => svc(args, { dataDir: localDir, env });
  const remote = (args: string[], token?: string, input?: string) => svc(args, { dataDir: none, input, env: { SVC_URL: server.url, SVC_TOKEN: token ?? admin.token } });

  beforeAll(async () => {
    init(localDir);
    admin = init(remoteDir);
    for (const dataDir of [localDir, remoteDir]) expect(svc(['datasets', 'create', 'logs', '--no-semantic'], { dataDir }).status).toBe(0);
    server = await serve(remoteDir, { env: FLOOR_ABOVE_FREE });
    member = remote(['keys', 'create', '--name', 'reader', '--role', 'member', '--output', 'json']).json().token;
  });
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  const cases: { kind: string; args: string[]; http: () => Promise<{ status: number }>; status: number; token?: () => string; localToo?: boolean }[] = [
    { kind: 'bad_request', args: ['sql', 'SELEC 1'], http: () => api().post('/v1/sql', { sql: 'SELEC 1' }), status: 400, localToo: true },
    { kind: 'unauthenticated', args: ['datasets', 'list'], http: () => api('garbage').get('/v1/datasets'), status: 401, token: () => 'garbage' },
    { kind: 'forbidden', args: ['datasets', 'create', 'other'], http: () => api(member).post('/v1/admin/datasets', { dataset_id: 'other' }), status: 403, token: () => member },
    { kind: 'not_found', args: ['datasets', 'get', 'nope'], http: () => api().get('/v1/datasets/nope'), status: 404, localToo: true },
    { kind: 'conflict', args: ['datasets', 'create', 'logs'], http: () => api().post('/v1/admin/datasets', { dataset_id: 'logs' }), status: 409, localToo: true },
    { kind: 'invalid', args: ['search', '--q', 'a:(b'], http: () => api().post('/v1/search', { q: 'a:(b' }), status: 422, localToo: true },
  ];

  it.each(cases)('$kind: the server answers its status, the CLI exits as the table says', async ({ args, http, status, token, localToo }) => {
    expect((await http()).status).toBe(status);
    const r = remote(args, token?.());
    expect([r.status, r.stderr.split('\n').length], r.stderr).toEqual([DOCUMENTED_EXIT[status], 2]);
    if (localToo) expect(local(args).status, args.join(' ')).toBe(DOCUMENTED_EXIT[status]);
  });

  it('too_large: a JSON body over its limit is a 413', async () => {
    // the length alone decides, before the body is read: sending it all would race the server's answer (EPIPE)
    const head = [`POST /v1/search HTTP/1.1`, `Host: localhost`, `Authorization: Bearer ${admin.token}`, `x-service-tenant-id: ${admin.tenant_id}`, 'Content-Type: application/json', `Content-Length: ${3 * 2 ** 20}`, 'Connection: close'];
    expect((await rawRequest(server.url, `${head.join('\r\n')}\r\n\r\n{"text": "aaaa`)).status).toBe(413);
  });

  it('disk_full: 507 from the server, exit 6 from a file (parts), stdin (a stream) and a local ingest', async () => {
    const file = join(dir.path, 'a.log');
    writeFileSync(file, 'a line\nanother line\n');
    expect((await api().call('POST', '/v1/ingest/sources/logs/stream?format=text', { body: 'a line\n', contentType: 'text/plain' })).status).toBe(507);
    const parts = remote(['ingest', 'logs', file]);
    const stream = remote(['ingest', 'logs', '-', '--format', 'text'], undefined, 'a line\n');
    const here = local(['ingest', 'logs', file], FLOOR_ABOVE_FREE);
    expect([parts.status, stream.status, here.status], parts.stderr + stream.stderr + here.stderr).toEqual([6, 6, 6]);
    expect(parts.stderr).toMatch(/^svc: part 1: the disk is nearly full/);
  });

  it('unavailable: a server that cannot be reached exits 1', () => {
    const r = svc(['datasets', 'list'], { dataDir: none, env: { SVC_URL: 'http://127.0.0.1:1', SVC_TOKEN: admin.token } });
    expect([r.status, r.stderr]).toEqual([1, expect.stringMatching(/^svc: cannot reach/)]);
  });
});

/**
 * Answers the CLI as the server does in cases a test cannot bring a real one to cheaply: a part or
 * a stream over its limit (64 MiB, 10 GiB), a 503 that lasts, a 500. The bodies are the server's.
 */
describe('refusals the CLI reads the same whichever way it sent the data', () => {
  const dir = tempDir('svc-errors-stub-');
  let stub: HttpServer;
  let base = '';
  let answer: { status: number; detail: unknown } = { status: 500, detail: 'internal error' };
  const send = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  function route(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '';
    req.resume(); // the body is read (and dropped) whatever the answer
    req.on('end', () => {
      if (url.endsWith('/uploads')) return send(res, 201, { upload_session_id: 'upl_stub', part_size_max: 64 * 2 ** 20, part_number_max: 10_000, object_size_max: 10 * 2 ** 30 });
      if (url.endsWith('/uploads/parts')) return send(res, 200, { parts: [{ part_number: 1, upload_url: `${base}/part/1` }] });
      if (url.endsWith('/uploads/abort')) return send(res, 200, {});
      send(res, answer.status, { detail: answer.detail });
    });
  }

  const run = (args: string[], input?: string) => svcAsync(args, { dataDir: join(dir.path, 'none'), input, env: { SVC_URL: base, SVC_TOKEN: 't', SVC_TENANT: 'ten_stub' } });

  beforeAll(async () => {
    writeFileSync(join(dir.path, 'a.log'), 'a line\n');
    stub = createServer(route);
    await new Promise<void>((ok) => stub.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => stub.close(ok));
    dir.remove();
  });

  it('a 413 on an upload part and a 413 on a stream both exit 2', async () => {
    answer = { status: 413, detail: { code: 'part_too_large', message: 'a part holds at most 67108864 bytes' } };
    const part = await run(['ingest', 'logs', join(dir.path, 'a.log')]);
    answer = { status: 413, detail: { code: 'object_too_large', message: 'object exceeds 10737418240 bytes' } };
    const stream = await run(['ingest', 'logs', '-', '--format', 'text'], 'a line\n');
    expect([part.status, part.stderr]).toEqual([2, 'svc: part 1: a part holds at most 67108864 bytes\n']);
    expect([stream.status, stream.stderr]).toEqual([2, 'svc: object exceeds 10737418240 bytes\n']);
  });

  it('a 507 on a part exits as a 507 on a stream; an auth refusal of a part as any other', async () => {
    for (const [status, detail, exit] of [[507, { code: 'disk_full', message: 'the disk is full' }, 6], [403, 'invalid or expired signature', 4]] as const) {
      answer = { status, detail };
      const codes = [(await run(['ingest', 'logs', join(dir.path, 'a.log')])).status, (await run(['ingest', 'logs', '-'], 'a line\n')).status];
      expect(codes, String(status)).toEqual([exit, exit]);
    }
  });

  it('a lasting 503, a 500 and a 414 exit as the table says', async () => {
    for (const [status, exit] of [[503, 1], [500, 1], [414, 2]]) {
      answer = { status, detail: `status ${status}` };
      const r = await run(['datasets', 'list']);
      expect([r.status, r.stderr], String(status)).toEqual([exit, `svc: status ${status}\n`]);
    }
  });
});
