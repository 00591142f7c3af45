/**
 * Query endpoints over HTTP, on a real data dir: saved searches with typed parameters, created by
 * admins and run by any member. Records are lines of the shared OpenSSH_2k.log.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useApp } from './helpers/app.js';
import { DATA } from './helpers/cli.js';
import { client, expectStatus, ingestStream, until, type Json } from './helpers/http.js';

const SSH = readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const rows = SSH.slice(0, 400).map((line, i) => ({ id: `ssh-${i}`, msg: line, n: i }));
const ndjson = (items: unknown[]) => items.map((r) => JSON.stringify(r)).join('\n') + '\n';

const { t, http } = useApp();

async function ingest(datasetId: string, items: unknown[]): Promise<void> {
  const done = await ingestStream(http, datasetId, ndjson(items));
  expect(done.ready_for.sql_search).toBe(true);
}

let ready = false;
async function setup(): Promise<void> {
  if (ready) return;
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'ssh', semantic: false }), 201);
  await ingest('ssh', rows);
  ready = true;
}

const byWord: Json = {
  name: 'by-word',
  description: 'lines with a word, from a line number on',
  search_request: { datasets: ['ssh'], q: '{{word}}', where: [{ field: 'n', op: 'gte', value: '{{from}}' }], limit: 1000 },
  params: [
    { name: 'word', type: 'string', required: true, description: 'a word of the line' },
    { name: 'from', type: 'integer', required: false, default: 0, min: 0, max: 10_000 },
  ],
};
const issues = (body: Json) => body.detail.map((d: Json) => ({ loc: d.loc, type: d.type }));
const ids = (env: Json) => env.records.map((r: Json) => r.id).sort();
/** what `/v1/search` answers for the same request, the ids of its records */
const searchIds = async (req: Json) => ids(expectStatus(await http.post('/v1/search', { datasets: ['ssh'], limit: 1000, ...req }), 200));

describe('query endpoints', () => {
  it('list by name, a page at a time', async () => {
    for (const name of ['page-c', 'page-a', 'page-b']) expectStatus(await http.post('/v1/admin/query-endpoints', { name, search_request: { q: 'x' } }), 201);
    const first = expectStatus(await http.get('/v1/admin/query-endpoints?limit=2'), 200);
    expect(first.query_endpoints.map((e: Json) => e.name)).toEqual(['page-a', 'page-b']);
    const rest = expectStatus(await http.get(`/v1/admin/query-endpoints?limit=2&cursor=${first.next_cursor}`), 200);
    expect(rest).toMatchObject({ query_endpoints: [{ name: 'page-c' }], next_cursor: null });
    for (const name of ['page-a', 'page-b', 'page-c']) expectStatus(await http.del(`/v1/admin/query-endpoints/${name}`), 200);
  });

  it('are created, listed, read, changed and deleted', async () => {
    const made = expectStatus(await http.post('/v1/admin/query-endpoints', byWord), 201);
    expect(made).toMatchObject({ name: 'by-word', description: byWord.description, search_request: byWord.search_request });
    expect(made.params[0]).toMatchObject({ name: 'word', type: 'string', required: true });
    expectStatus(await http.post('/v1/admin/query-endpoints', byWord), 409);
    const list = expectStatus(await http.get('/v1/admin/query-endpoints'), 200);
    expect(list.query_endpoints.map((e: Json) => e.name)).toEqual(['by-word']);
    expect(list.next_cursor).toBeNull();
    expect(expectStatus(await http.get('/v1/admin/query-endpoints/by-word'), 200)).toEqual(made);

    const changed = expectStatus(await http.call('PUT', '/v1/admin/query-endpoints/other', { json: { search_request: { q: 'x' } } }), 404);
    expect(changed).toBeDefined();
    const put = expectStatus(await http.call('PUT', '/v1/admin/query-endpoints/by-word', { json: { ...byWord, name: undefined, description: 'changed' } }), 200);
    expect(put.description).toBe('changed');
    expect(put.created_at).toBe(made.created_at);

    expectStatus(await http.post('/v1/admin/query-endpoints', { ...byWord, name: 'gone' }), 201);
    expectStatus(await http.del('/v1/admin/query-endpoints/gone'), 200);
    expectStatus(await http.get('/v1/admin/query-endpoints/gone'), 404);
    expectStatus(await http.get('/v1/query-endpoints/gone?word=x'), 404);
  });

  it('run by GET and by POST, answering what /v1/search answers', async () => {
    await setup();
    const viaGet = expectStatus(await http.get('/v1/query-endpoints/by-word?word=Failed&from=100'), 200);
    const expected = await searchIds({ q: '"Failed"', where: [{ field: 'n', op: 'gte', value: 100 }] });
    expect(expected.length).toBeGreaterThan(5);
    expect(ids(viaGet)).toEqual(expected);
    expect(viaGet.records.every((r: Json) => r.metadata.n >= 100)).toBe(true);
    const viaPost = expectStatus(await http.post('/v1/query-endpoints/by-word', { params: { word: 'Failed', from: 100 } }), 200);
    expect(ids(viaPost)).toEqual(expected);
    // the default fills what is left out
    const all = expectStatus(await http.post('/v1/query-endpoints/by-word', { params: { word: 'Failed' } }), 200);
    expect(ids(all)).toEqual(await searchIds({ q: '"Failed"' }));
    expect(all.records.length).toBeGreaterThan(viaPost.records.length);
  });

  it('a parameter in q is one quoted phrase: its quotes cannot change the query', async () => {
    await setup();
    const injected = expectStatus(await http.post('/v1/query-endpoints/by-word', { params: { word: 'Failed" OR "Invalid' } }), 200);
    const failed = await searchIds({ q: '"Failed"' });
    const either = await searchIds({ q: '"Failed" OR "Invalid"' });
    expect(either.length).toBeGreaterThan(failed.length);
    expect(ids(injected)).not.toEqual(either);
    expect(injected.records.length).toBeLessThan(failed.length);
  });

  it('refuses a missing, unknown, mistyped or out-of-range parameter with its location', async () => {
    await setup();
    let res = await http.get('/v1/query-endpoints/by-word?from=1');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'word'], type: 'missing' }]);
    res = await http.get('/v1/query-endpoints/by-word?word=x&from=abc');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'from'], type: 'value_error' }]);
    res = await http.get('/v1/query-endpoints/by-word?word=x&from=1.5');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'from'], type: 'value_error' }]);
    res = await http.get('/v1/query-endpoints/by-word?word=x&from=-1');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'from'], type: 'value_error' }]);
    res = await http.get('/v1/query-endpoints/by-word?word=x&nope=1');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'nope'], type: 'extra_forbidden' }]);
    res = await http.post('/v1/query-endpoints/by-word', { params: { word: 'x', from: '3' } });
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['body', 'from'], type: 'value_error' }]);
    res = await http.post('/v1/query-endpoints/by-word', { params: {} });
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['body', 'word'], type: 'missing' }]);

    expectStatus(await http.post('/v1/admin/query-endpoints', {
      name: 'by-level', search_request: { datasets: ['ssh'], q: '{{level}}' },
      params: [{ name: 'level', type: 'string', required: true, enum: ['Failed', 'Accepted'] }],
    }), 201);
    expectStatus(await http.get('/v1/query-endpoints/by-level?level=Failed'), 200);
    res = await http.get('/v1/query-endpoints/by-level?level=Other');
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['query', 'level'], type: 'value_error' }]);
  });

  it('refuses at creation a definition whose placeholders and parameters disagree', async () => {
    let res = await http.post('/v1/admin/query-endpoints', { name: 'bad', search_request: { q: '{{word}}' }, params: [] });
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['body', 'search_request'], type: 'value_error' }]);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad', search_request: { q: 'x' }, params: [{ name: 'word', type: 'string' }] });
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['body', 'params', 0, 'name'], type: 'value_error' }]);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad', search_request: { q: '{{n}}' }, params: [{ name: 'n', type: 'integer', default: 5, max: 3 }] });
    expect(issues(expectStatus(res, 422))).toEqual([{ loc: ['body', 'params', 0, 'default'], type: 'value_error' }]);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad', params: [] });
    expect(expectStatus(res, 422).detail.map((d: Json) => d.loc)).toEqual([['body', 'sql'], ['body', 'search_request']]);
    expectStatus(await http.get('/v1/admin/query-endpoints/bad'), 404);
  });

  it('a member runs and reads endpoints but may not create, change or delete one', async () => {
    await setup();
    const m = expectStatus(await http.post('/v1/admin/members', { email: 'endpoint-reader@example.test', role: 'member' }), 201);
    const member = client(() => t.url, { token: await t.engine.sessions.issue(m.user_id, 3600), tenant: t.admin.tenant_id });
    expectStatus(await member.post('/v1/admin/query-endpoints', { ...byWord, name: 'mine' }), 403);
    expectStatus(await member.call('PUT', '/v1/admin/query-endpoints/by-word', { json: { search_request: { q: 'x' } } }), 403);
    expectStatus(await member.del('/v1/admin/query-endpoints/by-word'), 403);
    expectStatus(await member.get('/v1/admin/query-endpoints'), 200);
    expectStatus(await member.get('/v1/admin/query-endpoints/by-word'), 200);
    const run = expectStatus(await member.get('/v1/query-endpoints/by-word?word=Failed'), 200);
    expect(run.records.length).toBeGreaterThan(0);
  });

  it('SQL endpoints bind $name parameters and answer what /v1/sql answers, by GET and by POST', async () => {
    await setup();
    const def = {
      name: 'lines-from',
      sql: 'SELECT n, _body FROM ssh WHERE n >= $from AND _body LIKE $pattern ORDER BY n',
      params: [{ name: 'from', type: 'integer', required: true, min: 0 }, { name: 'pattern', type: 'string', default: '%' }],
    };
    const direct = expectStatus(await http.post('/v1/sql', { sql: "SELECT n, _body FROM ssh WHERE n >= 100 AND _body LIKE '%Failed%' ORDER BY n" }), 200);
    expectStatus(await http.post('/v1/admin/query-endpoints', def), 201);
    const viaGet = expectStatus(await http.get('/v1/query-endpoints/lines-from?from=390'), 200);
    expect(viaGet.mode).toBe('sql');
    expect(viaGet.records.map((r: Json) => r.metadata.n)).toEqual([390, 391, 392, 393, 394, 395, 396, 397, 398, 399]);
    const viaPost = expectStatus(await http.post('/v1/query-endpoints/lines-from', { params: { from: 100, pattern: '%Failed%' } }), 200);
    expect(direct.records.length).toBeGreaterThan(5);
    expect(viaPost.records.map((r: Json) => r.metadata)).toEqual(direct.records.map((r: Json) => r.metadata));
    expect(viaPost.columns).toEqual(direct.columns);
    // a value is bound, never part of the statement: a quote in it matches nothing instead of ending the string
    const injected = expectStatus(await http.post('/v1/query-endpoints/lines-from', { params: { from: 0, pattern: "%' OR '1'='1" } }), 200);
    expect(injected.records).toEqual([]);
    expect(issues(expectStatus(await http.get('/v1/query-endpoints/lines-from?from=x'), 422))).toEqual([{ loc: ['query', 'from'], type: 'value_error' }]);
  });

  it('refuses at creation a SQL endpoint the guard refuses or whose $names and parameters disagree', async () => {
    await setup();
    let res = await http.post('/v1/admin/query-endpoints', { name: 'bad-sql', sql: 'DROP TABLE ssh', params: [] });
    expect(res.status, res.text).toBe(422);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad-sql', sql: "SELECT * FROM read_csv('/etc/passwd')", params: [] });
    expect(res.status, res.text).toBe(422);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad-sql', sql: 'SELECT no_such_column FROM ssh', params: [] });
    expect(expectStatus(res, 422).detail[0].loc).toEqual(['body', 'sql']);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad-sql', sql: 'SELECT n FROM ssh WHERE n > $low', params: [{ name: 'high', type: 'integer' }] });
    expect(expectStatus(res, 422).detail[0].loc).toEqual(['body', 'params']);
    res = await http.post('/v1/admin/query-endpoints', { name: 'bad-sql', sql: 'SELECT 1', search_request: { q: 'x' }, params: [] });
    expect(expectStatus(res, 422).detail.map((d: Json) => d.loc)).toEqual([['body', 'sql'], ['body', 'search_request']]);
    expectStatus(await http.get('/v1/admin/query-endpoints/bad-sql'), 404);
  });

  it('GET /v1/query-endpoints/openapi.json lists the tenant\'s endpoints with their typed parameters', async () => {
    const doc = expectStatus(await http.get('/v1/query-endpoints/openapi.json'), 200);
    expect(doc.openapi).toMatch(/^3\./);
    const get = doc.paths['/v1/query-endpoints/by-word'].get;
    expect(get.parameters).toEqual([
      { name: 'word', in: 'query', required: true, description: 'a word of the line', schema: { type: 'string' } },
      { name: 'from', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: 10_000, default: 0 } },
    ]);
    const body = doc.paths['/v1/query-endpoints/by-word'].post.requestBody.content['application/json'].schema.properties.params;
    expect(body.required).toEqual(['word']);
    expect(body.properties.from.type).toBe('integer');
    expect(doc.paths['/v1/query-endpoints/lines-from'].get.parameters.map((p: Json) => [p.name, p.schema.type])).toEqual([['from', 'integer'], ['pattern', 'string']]);
    expect(doc.paths['/v1/query-endpoints/gone']).toBeUndefined();
  });

  it('keeps an answer for cache_ttl_s, per parameters, until a dataset it reads receives data or the definition changes', async () => {
    await setup();
    const def = { ...byWord, name: 'cached', cache_ttl_s: 300 };
    expect(expectStatus(await http.post('/v1/admin/query-endpoints', def), 201).cache_ttl_s).toBe(300);
    const run = async (word: string) => expectStatus(await http.get(`/v1/query-endpoints/cached?word=${word}`), 200);
    const first = await run('Failed');
    const again = await run('Failed');
    expect(again.search_id).toBe(first.search_id); // served from the cache
    expect(again).toEqual(first);
    const other = await run('Invalid');
    expect(other.search_id).not.toBe(first.search_id); // other parameters, another answer
    // an endpoint without cache_ttl_s runs every time
    const a = await http.get('/v1/query-endpoints/by-word?word=Failed');
    const b = await http.get('/v1/query-endpoints/by-word?word=Failed');
    expect(a.body.search_id).not.toBe(b.body.search_id);

    await ingest('ssh', [{ id: 'ssh-new', msg: 'Failed password for nobody from 10.0.0.1', n: 5000 }]);
    const after = await run('Failed');
    expect(after.search_id).not.toBe(first.search_id);
    expect(after.records.map((r: Json) => r.id)).toContain('ssh-new');
    expect(after.records.length).toBe(first.records.length + 1);
    expect((await run('Failed')).search_id).toBe(after.search_id);

    expectStatus(await http.call('PUT', '/v1/admin/query-endpoints/cached', { json: { ...def, name: undefined, description: 'changed' } }), 200);
    expect((await run('Failed')).search_id).not.toBe(after.search_id);
  });
});
