import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const dir = tempDir('svc-connectors-');
const dataDir = join(dir.path, 'data');
const logs = join(dir.path, 'logs');
let server: Server;
let admin: { tenant_id: string; token: string };
const http = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));

/** Records of a dataset (whose body holds `text`), counted by SQL. */
async function count(dataset: string, text?: string): Promise<number> {
  const [row] = await sqlRows(`SELECT count(*) AS n FROM "${dataset}"${text === undefined ? '' : ` WHERE _body LIKE '%${text}%'`}`);
  return Number(row.metadata.n);
}
const sqlRows = async (sql: string) => expectStatus(await http.post('/v1/sql', { sql }), 200).records as Json[];

async function syncNow(sourceId: number): Promise<Json> {
  const run = expectStatus(await http.post(`/v1/admin/connector-sources/${sourceId}/sync`), 202);
  return until(`sync ${run.connector_run_id}`, async () => {
    const s = expectStatus(await http.get(`/v1/admin/connector-sources/${sourceId}/syncs/${run.connector_run_id}`), 200);
    return ['succeeded', 'failed', 'cancelled'].includes(s.status) ? s : undefined;
  });
}

/** Waits for every ingest run a sync started to end. */
async function settled(sync: Json): Promise<void> {
  for (const id of sync.ingest_run_ids) {
    await until(`run ${id}`, async () => {
      const r = expectStatus(await http.get(`/v1/ingest/runs/${id}`), 200);
      return r.status === 'ready' || r.status === 'failed' ? r : undefined;
    });
  }
}

const directorySource = (over: Json = {}) => ({
  dataset_id: 'logs', source_key: 'app-logs', name: 'app logs', source_type: 'connector', connector_id: 'directory',
  connector_config: { path: logs, include: ['*.log'] }, parse_config: { format: 'text' }, ...over,
});

beforeAll(async () => {
  mkdirSync(logs);
  admin = init(dataDir);
  for (const ds of ['logs', 'api', 'tail']) expect(svc(['datasets', 'create', ds, '--no-semantic'], { dataDir }).status).toBe(0);
  server = await serve(dataDir);
});
afterAll(async () => {
  await server?.stop();
  dir.remove();
});

describe('connector kinds and sources', () => {
  it('lists the built-in kinds with the JSON schema of their config', async () => {
    const { connectors } = expectStatus(await http.get('/v1/admin/connectors'), 200);
    expect(connectors.map((c: Json) => [c.connector_id, c.kind])).toEqual([[1, 'directory'], [2, 'http']]);
    expect(connectors[0].config_schema.required).toContain('path');
    expect(Object.keys(connectors[1].config_schema.properties)).toEqual(expect.arrayContaining(['url', 'records_path', 'next_link_path', 'cursor_param', 'cursor_field']));
    expect(connectors[1].credentials_schema.properties).toHaveProperty('bearer_token');
  });

  it('refuses an unknown kind, a bad config and credentials a kind takes none of, each at its place (422)', async () => {
    const cases: [Json, (string | number)[]][] = [
      [directorySource({ connector_id: 'ftp' }), ['body', 'connector_id']],
      [directorySource({ connector_id: 9 }), ['body', 'connector_id']],
      [directorySource({ connector_config: { path: 'relative/dir' } }), ['body', 'connector_config', 'path']],
      [directorySource({ connector_config: { path: logs, surprise: 1 } }), ['body', 'connector_config']],
      [directorySource({ connector_credentials: { bearer_token: 'x' } }), ['body', 'connector_credentials']],
      [directorySource({ connector_id: 'http', connector_config: { url: 'ftp://example.com' } }), ['body', 'connector_config', 'url']],
      [directorySource({ connector_id: 'http', connector_config: { url: 'http://127.0.0.1:9/', headers: { Authorization: 'Bearer x' } } }), ['body', 'connector_config', 'headers']],
      [directorySource({ connector_config: { path: dataDir } }), ['body', 'connector_config', 'path']],
      [directorySource({ connector_config: { path: join(dataDir, 'blobs') } }), ['body', 'connector_config', 'path']],
    ];
    for (const [body, loc] of cases) {
      const res = await http.put('/v1/admin/connector-sources/50', body);
      expect(res.status, res.text).toBe(422);
      expect(res.body.detail.some((d: Json) => JSON.stringify(d.loc.slice(0, loc.length)) === JSON.stringify(loc)), res.text).toBe(true);
    }
    expectStatus(await http.get('/v1/admin/sources/50'), 404); // nothing was stored
    expectStatus(await http.put('/v1/admin/connector-sources/50', directorySource({ dataset_id: 'nope' })), 404);
  });
});

describe('directory connector', () => {
  it('syncs new lines of matching files, each line once, each record pointing at its file and line', async () => {
    writeFileSync(join(logs, 'app.log'), '2024-05-01T10:00:00Z app started\n2024-05-01T10:00:01Z request served\n');
    writeFileSync(join(logs, 'notes.txt'), 'not a log\n');
    writeFileSync(join(logs, 'old.log'), gzipSync('2024-04-30T09:00:00Z archived line\n'));
    const source = expectStatus(await http.put('/v1/admin/connector-sources/10', directorySource()), 200);
    expect(source).toMatchObject({ source_id: 10, source_type: 'connector', connector_id: 1 });

    const first = await syncNow(10);
    expect(first).toMatchObject({ status: 'succeeded', trigger: 'manual', objects: 2 });
    await settled(first);
    expect(await count('logs')).toBe(3);
    const run = expectStatus(await http.get(`/v1/ingest/runs/${first.ingest_run_ids[0]}`), 200);
    expect(run).toMatchObject({ connector_run_id: first.connector_run_id, input_kind: 'connector', status: 'ready' });
    const [rec] = await sqlRows(`SELECT _id FROM logs WHERE _body LIKE '%request served%'`);
    expect(rec.provenance).toMatchObject({ line: 2, source_etag: expect.stringMatching(/^[0-9a-f]{32}-[0-9a-f]{16}$/) });
    expect(rec.time).toBe('2024-05-01T10:00:01.000Z');

    appendFileSync(join(logs, 'app.log'), '2024-05-01T10:00:02Z heartbeat\n2024-05-01T10:00:03Z partial');
    const second = await syncNow(10);
    await settled(second);
    expect(second.objects).toBe(1); // the .gz file is read once; only app.log grew
    expect(await count('logs')).toBe(4); // the line without its newline waits
    appendFileSync(join(logs, 'app.log'), ' line done\n2024-05-01T10:00:04Z heartbeat\n');
    await settled(await syncNow(10));
    expect(await count('logs', 'partial line done')).toBe(1);
    expect(await count('logs', 'heartbeat')).toBe(2); // a line repeated in a later write is a record of its own
    const nothing = await syncNow(10);
    expect(nothing).toMatchObject({ status: 'succeeded', objects: 0 });
  });
});

describe('HTTP connector', () => {
  let api: HttpServer;
  let apiUrl = '';
  const seen: { url: string; auth?: string }[] = [];
  let items = Array.from({ length: 25 }, (_, i) => ({ id: i + 1, updated_at: `2024-05-01T10:${String(i).padStart(2, '0')}:00Z`, message: `ticket ${i + 1}` }));
  let failing = false;

  beforeAll(async () => {
    api = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      seen.push({ url: req.url!, auth: req.headers.authorization });
      if (failing) return res.writeHead(500).end('down');
      if (url.pathname === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 1500);
      const since = url.searchParams.get('since');
      const page = items.filter((t) => !since || t.updated_at > since).slice(0, 10);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: page }));
    });
    await new Promise<void>((ok) => api.listen(0, '127.0.0.1', ok));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => api.close(() => ok())));

  const httpSource = (over: Json = {}) => ({
    dataset_id: 'api', source_key: 'tickets', name: 'tickets', source_type: 'connector', connector_id: 2,
    connector_config: { url: `${apiUrl}/tickets`, records_path: 'data', cursor_param: 'since', cursor_field: 'updated_at' },
    connector_credentials: { bearer_token: 'tok-sekret-123' }, ...over,
  });

  it('pages by cursor, reads incrementally, sends the token and never shows it', async () => {
    const put = await http.put('/v1/admin/connector-sources/20', httpSource());
    expectStatus(put, 200);
    expect(put.text).not.toContain('tok-sekret-123');
    const conn = expectStatus(await http.get('/v1/admin/connector-sources/20'), 200);
    expect(conn.integration).toMatchObject({ credential_status: 'configured', provider_key: 'http', source_id: 20, connection_status: 'inactive' });
    expect(JSON.stringify(conn)).not.toContain('tok-sekret-123');

    const first = await syncNow(20);
    await settled(first);
    expect(first.status, first.error_message).toBe('succeeded');
    expect(await count('api')).toBe(25);
    expect(seen.every((s) => s.auth === 'Bearer tok-sekret-123')).toBe(true);
    expect(seen.some((s) => s.url.includes('since=2024-05-01T10%3A09%3A00Z'))).toBe(true); // the second page asked from the first's highest cursor

    items = [...items, { id: 26, updated_at: '2024-05-01T11:00:00Z', message: 'ticket 26' }];
    await settled(await syncNow(20));
    expect(await count('api')).toBe(26);
    expect(await count('api', 'ticket 26')).toBe(1);
  });

  it('a server that keeps failing fails the sync with a one-line reason, and keeps what was read', async () => {
    failing = true;
    try {
      const sync = await syncNow(20);
      expect(sync.status).toBe('failed');
      expect(sync.error_message).toMatch(/500/);
      expect(sync.error_message).not.toContain('tok-sekret-123');
    } finally {
      failing = false;
    }
    expect(await count('api')).toBe(26);
  });

  it('refuses a second sync while one runs (409)', async () => {
    expectStatus(await http.put('/v1/admin/connector-sources/21', httpSource({ source_key: 'slow', connector_config: { url: `${apiUrl}/slow` } })), 200);
    const running = expectStatus(await http.post('/v1/admin/connector-sources/21/sync'), 202);
    const again = await http.post('/v1/admin/connector-sources/21/sync');
    expect(again.status, again.text).toBe(409);
    await until('slow sync', async () => {
      const s = expectStatus(await http.get(`/v1/admin/connector-sources/21/syncs/${running.connector_run_id}`), 200);
      return s.status === 'succeeded' ? s : undefined;
    });
  });
});

describe('HTTP connector credentials and lifecycle', () => {
  let origin: HttpServer;
  let elsewhere: HttpServer;
  const heard: { where: string; auth?: string }[] = [];
  const listen = async (server: HttpServer) => {
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  let originUrl = '';
  let elsewhereUrl = '';

  beforeAll(async () => {
    elsewhere = createServer((req, res) => {
      heard.push({ where: 'elsewhere', auth: req.headers.authorization });
      res.writeHead(200, { 'content-type': 'application/x-ndjson' }).end('{"id":"e1","msg":"from elsewhere"}\n');
    });
    elsewhereUrl = await listen(elsewhere);
    origin = createServer((req, res) => {
      heard.push({ where: 'origin', auth: req.headers.authorization });
      if (req.url === '/hang') return; // never answers: a sync that runs until cancelled
      res.writeHead(200, { 'content-type': 'application/x-ndjson', link: `<${elsewhereUrl}/more>; rel="next"` }).end('{"id":"o1","msg":"from origin"}\n');
    });
    originUrl = await listen(origin);
  });
  afterAll(async () => {
    for (const s of [origin, elsewhere]) s.closeAllConnections();
    await Promise.all([origin, elsewhere].map((s) => new Promise((ok) => s.close(ok))));
  });

  const source = (url: string, over: Json = {}) => ({
    dataset_id: 'api', source_key: 'linked', name: 'linked', source_type: 'connector', connector_id: 'http',
    connector_config: { url, timeout_ms: 300_000 }, connector_credentials: { bearer_token: 'origin-only-token' }, ...over,
  });

  it('sends the token only to the connector URL\'s origin, not to a next link elsewhere', async () => {
    expectStatus(await http.put('/v1/admin/connector-sources/22', source(`${originUrl}/items`)), 200);
    const sync = await syncNow(22);
    expect(sync.status, sync.error_message).toBe('succeeded');
    expect(heard).toEqual([{ where: 'origin', auth: 'Bearer origin-only-token' }, { where: 'elsewhere', auth: undefined }]);
    // the URL moves to another origin without credentials: the old ones are not carried there
    const moved = expectStatus(await http.put('/v1/admin/connector-sources/22', source(`${elsewhereUrl}/items`, { connector_credentials: undefined })), 200);
    expect(moved.source_id).toBe(22);
    expect(expectStatus(await http.get('/v1/admin/connector-sources/22'), 200).integration.credential_status).toBe('not_configured');
  });

  it('a cancelled sync frees the source for the next one', async () => {
    expectStatus(await http.put('/v1/admin/connector-sources/22', source(`${originUrl}/hang`)), 200);
    const hanging = expectStatus(await http.post('/v1/admin/connector-sources/22/sync'), 202);
    expectStatus(await http.post('/v1/admin/connector-sources/22/sync'), 409);
    await until('the sync running', async () => (expectStatus(await http.get(`/v1/admin/connector-sources/22/syncs/${hanging.connector_run_id}`), 200).status === 'running' ? true : undefined));
    expectStatus(await http.post(`/v1/admin/jobs/${hanging.job_id}/cancel`), 200);
    const ended = await until('the sync cancelled', async () => {
      const s = expectStatus(await http.get(`/v1/admin/connector-sources/22/syncs/${hanging.connector_run_id}`), 200);
      return s.status === 'cancelled' ? s : undefined;
    });
    expect(ended.completed_at).not.toBeNull();
    expectStatus(await http.put('/v1/admin/connector-sources/22', source(`${originUrl}/items`)), 200);
    expect(expectStatus(await http.post('/v1/admin/connector-sources/22/sync'), 202).connector_run_id).not.toBe(hanging.connector_run_id);
  });

  it('a source put back as hosted is no longer a connector source', async () => {
    expectStatus(await http.put('/v1/admin/hosted-sources/22', { dataset_id: 'api', source_key: 'linked', name: 'linked', source_type: 'hosted' }), 200);
    expectStatus(await http.get('/v1/admin/connector-sources/22'), 404);
    expectStatus(await http.post('/v1/admin/connector-sources/22/sync'), 404);
  });
});

describe('connection and schedule', () => {
  it('answers the integration with every field the spec lists', async () => {
    const res = expectStatus(
      await http.post('/v1/admin/connector-sources/10/connection', { sync_catalog: { streams: [{ name: '*.log', selected: true, sync_mode: 'incremental' }] }, schedule_type: 'manual' }),
      200,
    );
    const keys = ['integration_connection_id', 'integration_destination_id', 'integration_source_definition_id', 'integration_source_definition_name', 'integration_source_id', 'connection_status', 'credential_status', 'destination_status', 'oauth_mode', 'provider_key', 'schedule_type', 'cron_expression', 'source_id', 'stream_config'];
    expect(Object.keys(res.integration).sort()).toEqual(keys.sort());
    expect(res.integration).toMatchObject({ connection_status: 'active', credential_status: 'not_configured', schedule_type: 'manual', cron_expression: null, integration_destination_id: 'logs' });
    expect(res.source.source_id).toBe(10);
  });

  it('refuses a bad cron, an unknown zone and a directory stream read in full (422)', async () => {
    const bodies: [Json, string][] = [
      [{ sync_catalog: { streams: [] }, schedule_type: 'cron', cron_expression: '61 * * * *' }, 'cron_expression'],
      [{ sync_catalog: { streams: [] }, schedule_type: 'cron', cron_expression: '* * * * *', cron_timezone: 'Mars/Base' }, 'cron_timezone'],
      [{ sync_catalog: { streams: [] }, schedule_type: 'cron' }, 'cron_expression'],
      [{ sync_catalog: { streams: [{ name: '*.log', selected: true, sync_mode: 'full_refresh' }] } }, 'sync_catalog'],
      [{ sync_catalog: { streams: [] }, cron_expression: 'x'.repeat(256) }, 'cron_expression'],
    ];
    for (const [body, at] of bodies) {
      const res = await http.post('/v1/admin/connector-sources/10/connection', body);
      expect(res.status, res.text).toBe(422);
      expect(res.body.detail[0].loc[1]).toBe(at);
    }
  });

  it('runs syncs on a cron schedule in its time zone', async () => {
    const cronDir = join(dir.path, 'cron');
    mkdirSync(cronDir);
    writeFileSync(join(cronDir, 'cron.log'), '2024-05-02T00:00:00Z written before the schedule\n');
    expectStatus(await http.put('/v1/admin/connector-sources/11', directorySource({ source_key: 'cron-logs', connector_config: { path: cronDir } })), 200);
    const res = expectStatus(
      await http.post('/v1/admin/connector-sources/11/connection', { sync_catalog: { streams: [] }, schedule_type: 'cron', cron_expression: '* * * * * *', cron_timezone: 'Asia/Kolkata' }),
      200,
    );
    expect(res.integration).toMatchObject({ schedule_type: 'cron', cron_expression: '* * * * * *' });
    expect(res.integration.stream_config).toMatchObject({ cron_timezone: 'Asia/Kolkata' });
    expect(Date.parse(res.integration.stream_config.next_sync_at)).toBeGreaterThan(Date.now() - 2000);
    await until('a cron sync', async () => {
      const { syncs } = expectStatus(await http.get('/v1/admin/connector-sources/11/syncs'), 200);
      return syncs.find((s: Json) => s.trigger === 'cron' && s.status === 'succeeded' && s.objects > 0);
    });
    await until('the cron sync indexed', async () => ((await count('logs', 'written before the schedule')) === 1 ? true : undefined));
    // back to manual: the cron job staged before finds its schedule replaced and does nothing
    expectStatus(await http.post('/v1/admin/connector-sources/11/connection', { sync_catalog: { streams: [] }, schedule_type: 'manual' }), 200);
    await new Promise((ok) => setTimeout(ok, 1500));
    const { syncs } = expectStatus(await http.get('/v1/admin/connector-sources/11/syncs'), 200);
    await new Promise((ok) => setTimeout(ok, 1500));
    expect(expectStatus(await http.get('/v1/admin/connector-sources/11/syncs'), 200).syncs.length).toBe(syncs.length);
  });
});

describe('following a directory under svc serve', () => {
  const tail = join(dir.path, 'tail');
  const written: string[] = [];
  const write = (file: string, n: number) => {
    const lines = Array.from({ length: n }, () => `2024-05-03T00:00:00Z event ${written.length} ${written.push('x')}`);
    appendFileSync(join(tail, file), lines.map((l) => l + '\n').join(''));
  };
  const tailCount = () => count('tail');

  it('reads appends, a rotation by rename, a truncation and new files, every line exactly once, through a SIGKILL', async () => {
    mkdirSync(tail);
    write('svc.log', 50);
    expectStatus(
      await http.put('/v1/admin/connector-sources/30', { dataset_id: 'tail', source_key: 'tail-dir', name: 'tail', source_type: 'connector', connector_id: 'directory', connector_config: { path: tail, include: ['*.log'], follow: true }, parse_config: { format: 'text' } }),
      200,
    );
    await until('the first lines', async () => ((await tailCount()) === 50 ? true : undefined));
    write('svc.log', 25);
    await until('appended lines', async () => ((await tailCount()) === 75 ? true : undefined));

    // rotation: lines land in the old file just before it is renamed away, then the new file starts
    write('svc.log', 10);
    renameSync(join(tail, 'svc.log'), join(tail, 'svc.log.1'));
    write('svc.log', 15);
    await until('rotated lines', async () => ((await tailCount()) === 100 ? true : undefined));

    // copytruncate: the file is emptied in place and written again
    writeFileSync(join(tail, 'svc.log'), '');
    write('svc.log', 5);
    write('other.log', 5);
    await until('truncated and new files', async () => ((await tailCount()) === 110 ? true : undefined));

    // a hard kill while lines keep coming: after the restart, nothing is lost and nothing repeated
    const writer = setInterval(() => write('svc.log', 20), 20);
    await new Promise((ok) => setTimeout(ok, 300));
    server.proc.kill('SIGKILL');
    await new Promise((ok) => server.proc.once('exit', ok));
    write('svc.log', 20);
    clearInterval(writer);
    write('svc.log', 7);
    server = await serve(dataDir);
    const total = written.length;
    await until(`all ${total} lines`, async () => ((await tailCount()) >= total ? true : undefined), 60_000);
    const [row] = await sqlRows(`SELECT count(*) AS n, count(DISTINCT _body) AS d FROM tail`);
    expect(Number(row.metadata.n)).toBe(total);
    expect(Number(row.metadata.d)).toBe(total);
  });
});
