/**
 * Hosted multipart uploads over HTTP: a real `svc serve` on loopback (part limit lowered to 1 MiB
 * with SVC_UPLOAD_PART_MAX_BYTES), driven with undici, and a second one whose sessions live two
 * seconds to see them swept. Every check is on what the API returns, what lands on disk, and the
 * real file that was sent.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecret } from '../src/engine/auth/secret.js';
import { partQuery, verifyPart } from '../src/engine/uploads/signing.js';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const PART_MAX = 2 ** 20;
const apachePath = join(DATA, 'ingest/apache_access_combined.log');
const apache = readFileSync(apachePath);
const apacheLines = apache.toString('utf8').split('\n');
const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

let dir: ReturnType<typeof tempDir>;
let server: Server;
let admin: { tenant_id: string; user_id: string; token: string };

const { call } = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));

const post = (path: string, json: unknown, token?: string | null) => call('POST', path, { json, token });
/** A PUT to a part URL: no bearer token, no tenant header — the URL is the credential. */
const putPart = (url: string, body: Buffer | AsyncIterable<Buffer>) => call('PUT', url, { body, token: null, tenant: null });
const uploads = (source: string) => `/v1/ingest/sources/${source}/uploads`;

const waitRun = (id: string) =>
  until(`run ${id}`, async () => {
    const run = expectStatus(await call('GET', `/v1/ingest/runs/${id}`), 200);
    return run.status === 'ready' || run.status === 'failed' ? run : undefined;
  });

const recordCount = async (dataset: string): Promise<number> => expectStatus(await call('GET', `/v1/datasets/${dataset}`), 200).record_count;

/** Splits bytes into `n` nearly equal pieces. */
function pieces(bytes: Buffer, n: number): Buffer[] {
  const size = Math.ceil(bytes.length / n);
  return Array.from({ length: n }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

async function session(source: string, filename: string, extra: Record<string, unknown> = {}, token?: string): Promise<Json> {
  return expectStatus(await post(uploads(source), { filename, ...extra }, token), 201);
}

async function urls(source: string, id: string, parts: number[], extra: Record<string, unknown> = {}, token?: string): Promise<Json[]> {
  return expectStatus(await post(`${uploads(source)}/parts`, { upload_session_id: id, part_numbers: parts, ...extra }, token), 200).parts;
}

/** Sends each piece as part i+1; returns the complete body's parts list. */
async function sendAll(source: string, id: string, bytes: Buffer[], token?: string): Promise<{ part_number: number; etag: string }[]> {
  const signed = await urls(source, id, bytes.map((_, i) => i + 1), {}, token);
  return Promise.all(
    signed.map(async (p, i) => {
      const res = await putPart(p.upload_url, bytes[i]);
      expectStatus(res, 200);
      return { part_number: p.part_number, etag: res.body.etag };
    }),
  );
}

const partsDir = (id: string) => join(dir.path, 'blobs', admin.tenant_id, '.uploads', id);

async function createDataset(id: string): Promise<Json> {
  return expectStatus(await post('/v1/admin/datasets', { dataset_id: id }), 201);
}

beforeAll(async () => {
  dir = tempDir();
  admin = init(dir.path);
  process.env.SVC_UPLOAD_PART_MAX_BYTES = String(PART_MAX);
  try {
    server = await serve(dir.path);
  } finally {
    delete process.env.SVC_UPLOAD_PART_MAX_BYTES;
  }
});

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

describe('a file sent in parts', () => {
  let completed: Json;
  let created: Json;

  it('creates a session, signs part URLs, stores parts with their md5 etags, and completes into one object', async () => {
    await createDataset('up-apache');
    created = await session('up-apache', 'apache_access_combined.log', { content_type: 'text/plain', size_bytes: apache.length });
    expect(created).toMatchObject({ bucket: 'hosted', part_size_max: PART_MAX, part_number_max: 10_000, object_size_max: 10 * 2 ** 30 });
    expect(created.key).toMatch(/^up-apache\/obj_[0-9a-z]{26}\/apache_access_combined\.log$/);
    expect(Date.parse(created.expires_at)).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const bytes = pieces(apache, 3);
    const signed = await urls('up-apache', created.upload_session_id, [1, 2, 3]);
    expect(signed.map((p) => p.part_number)).toEqual([1, 2, 3]);
    for (const p of signed) {
      expect(p.upload_url.startsWith(`${server.url}/v1/uploads/${created.upload_session_id}/parts/${p.part_number}?`)).toBe(true);
      expect(Date.parse(p.expires_at) - Date.now()).toBeGreaterThan(3500_000);
    }
    const sent = [];
    for (const [i, p] of signed.entries()) {
      const res = await putPart(p.upload_url, bytes[i]);
      expectStatus(res, 200);
      expect(res.headers.etag).toBe(`"${md5(bytes[i])}"`);
      expect(res.body).toEqual({ etag: md5(bytes[i]), part_number: i + 1, size_bytes: bytes[i].length });
      // etags go back quoted as in the header, or bare
      sent.push({ part_number: i + 1, etag: i === 0 ? res.headers.etag : res.body.etag });
    }
    completed = expectStatus(await post(`${uploads('up-apache')}/complete`, { upload_session_id: created.upload_session_id, parts: sent }), 200);
    expect(completed).toMatchObject({
      bucket: 'hosted', dataset_id: 'up-apache', etag: md5(apache), image_reference: null, key: created.key,
      source: 'up-apache', tenant_id: admin.tenant_id, upload_session_id: created.upload_session_id, size_bytes: apache.length,
    });
    expect(Number.isInteger(completed.source_id)).toBe(true);
    expect(existsSync(partsDir(created.upload_session_id))).toBe(false);
    expect(readFileSync(join(dir.path, 'blobs', admin.tenant_id, 'hosted', created.key)).equals(apache)).toBe(true);
  });

  it('starts a hosted_upload run that makes every line searchable with provenance to the uploaded object', async () => {
    const run = await waitRun(completed.ingest_run_id);
    expect(run).toMatchObject({ status: 'ready', input_kind: 'hosted_upload', upload_session_id: created.upload_session_id, key: created.key, etag: md5(apache), format: 'text' });
    expect(run.documents.parsed).toBe(10_000);
    const env = expectStatus(await post('/v1/search', { text: 'kibana-dashboard3', datasets: ['up-apache'], limit: 5 }), 200);
    expect(env.records.length).toBeGreaterThan(0);
    for (const r of env.records) {
      expect(r.provenance).toMatchObject({ dataset_id: 'up-apache', tenant_id: admin.tenant_id, source_bucket: 'hosted', source_key: created.key, source_etag: md5(apache) });
      expect(r.body).toBe(apacheLines[r.provenance.line - 1]);
    }
  });

  it('gives the same bytes sent as a stream the same record ids', async () => {
    const res = await call('POST', '/v1/ingest/sources/up-apache/stream?format=text', { body: apache });
    const run = await waitRun(expectStatus(res, 202).ingest_run_id);
    expect(run.status).toBe('ready');
    expect(await recordCount('up-apache')).toBe(10_000);
  });

  it('answers a complete sent again with the same object and starts no second run', async () => {
    const again = expectStatus(await post(`${uploads('up-apache')}/complete`, { upload_session_id: created.upload_session_id, parts: [{ part_number: 1, etag: 'x' }] }), 200);
    expect(again).toEqual(completed);
    const runs = expectStatus(await call('GET', `/v1/ingest/runs?source_id=${completed.source_id}`), 200).runs;
    expect(runs.filter((r: Json) => r.upload_session_id === created.upload_session_id)).toHaveLength(1);
  });

  it('answers two completes sent at once with one object and one run', async () => {
    const s = await session('up-apache', 'twice.ndjson');
    const parts = await sendAll('up-apache', s.upload_session_id, [Buffer.from('{"msg":"one"}\n{"msg":"two"}\n')]);
    const [a, b] = await Promise.all([0, 1].map(() => post(`${uploads('up-apache')}/complete`, { upload_session_id: s.upload_session_id, parts })));
    expect(expectStatus(a, 200)).toEqual(expectStatus(b, 200));
    const runs = expectStatus(await call('GET', `/v1/ingest/runs?source_id=${a.body.source_id}`), 200).runs;
    expect(runs.filter((r: Json) => r.upload_session_id === s.upload_session_id)).toHaveLength(1);
    expect((await waitRun(a.body.ingest_run_id)).documents.parsed).toBe(2);
  });
});

describe('signed part URLs', () => {
  let id: string;
  beforeAll(async () => {
    await createDataset('up-sig');
    id = (await session('up-sig', 'sig.ndjson')).upload_session_id;
  });

  it('refuses an expired URL with 403', async () => {
    const [p] = await urls('up-sig', id, [1], { expires_in: 1 });
    expect(Date.parse(p.expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    // the same part's URL signed with the data dir's secret as svc signs it, but a minute past its expiry
    const expires = Math.floor(Date.now() / 1000) - 60;
    const secret = loadSecret(dir.path);
    const expired = new URL(p.upload_url);
    expired.search = partQuery(secret, { tenant: admin.tenant_id, session: id, part: 1, expires });
    const ref = { tenant: admin.tenant_id, upload_session_id: id, part_number: '1', expires: String(expires), sig: expired.searchParams.get('sig')! };
    expect(verifyPart(secret, ref, (expires - 1) * 1000)).toMatchObject({ session: id, part: 1 }); // its signature holds
    const res = await putPart(expired.toString(), Buffer.from('{"a":1}\n'));
    expect(expectStatus(res, 403).detail).toMatch(/expired/);
  });

  it('refuses an altered URL with 403: signature, part number, expiry, tenant, session, or no signature at all', async () => {
    const [p] = await urls('up-sig', id, [1]);
    const url = new URL(p.upload_url);
    const sig = url.searchParams.get('sig')!;
    const altered = [
      (u: URL) => u.searchParams.set('sig', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1)),
      (u: URL) => (u.pathname = u.pathname.replace(/\/1$/, '/2')),
      (u: URL) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)),
      (u: URL) => u.searchParams.set('tenant', 'ten_other'),
      (u: URL) => (u.pathname = u.pathname.replace(id, `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`)),
      (u: URL) => u.searchParams.delete('sig'),
    ];
    for (const alter of altered) {
      const u = new URL(url);
      alter(u);
      expect(u.toString()).not.toBe(p.upload_url);
      expectStatus(await putPart(u.toString(), Buffer.from('{"a":1}\n')), 403);
    }
    expect(existsSync(partsDir(id)) ? readdirSync(partsDir(id)) : []).toEqual([]);
    expectStatus(await putPart(p.upload_url, Buffer.from('{"a":1}\n')), 200);
  });

  it('validates part numbers (1..10000), URL lifetimes and the announced size (422)', async () => {
    for (const part_numbers of [[0], [10_001], []]) expectStatus(await post(`${uploads('up-sig')}/parts`, { upload_session_id: id, part_numbers }), 422);
    expectStatus(await post(`${uploads('up-sig')}/parts`, { upload_session_id: id, part_numbers: [1], expires_in: 0 }), 422);
    const tooBig = expectStatus(await post(uploads('up-sig'), { filename: 'big.log', size_bytes: 10 * 2 ** 30 + 1 }), 422);
    expect(tooBig.detail[0].loc).toEqual(['body', 'size_bytes']);
    expectStatus(await post(`${uploads('up-sig')}/parts`, { upload_session_id: 'upl_nope', part_numbers: [1] }), 404);
  });
});

describe('part size limit', () => {
  let id: string;
  beforeAll(async () => {
    await createDataset('up-limit');
    id = (await session('up-limit', 'big.log')).upload_session_id;
  });

  it('refuses a part over the limit with 413, whether its length is announced or it streams', async () => {
    const [p] = await urls('up-limit', id, [1]);
    const big = Buffer.alloc(PART_MAX + 1, 'a');
    expect(expectStatus(await putPart(p.upload_url, big), 413).detail.code).toBe('part_too_large');
    async function* chunked() {
      for (let i = 0; i < 5; i++) yield Buffer.alloc(PART_MAX / 2, 'b');
    }
    expect(expectStatus(await putPart(p.upload_url, chunked()), 413).detail.code).toBe('part_too_large');
    // nothing was kept, and the part can still be sent within the limit
    expect(existsSync(partsDir(id)) ? readdirSync(partsDir(id)) : []).toEqual([]);
    const ok = expectStatus(await putPart(p.upload_url, Buffer.alloc(PART_MAX, 'c')), 200);
    expect(ok.size_bytes).toBe(PART_MAX);
    expect(readdirSync(partsDir(id))).toHaveLength(1);
  });
});

describe('a PUT cut off half-way', () => {
  it('keeps nothing of it, and the part can be sent again', async () => {
    await createDataset('up-cut');
    const { upload_session_id: id } = await session('up-cut', 'cut.ndjson');
    const [p] = await urls('up-cut', id, [1]);
    async function* cut() {
      yield Buffer.from('{"half":');
      await sleep(100);
      throw new Error('client gone');
    }
    await expect(request(p.upload_url, { method: 'PUT', body: Readable.from(cut()) })).rejects.toThrow();
    await until('the cut-off part to be dropped', async () => ((existsSync(partsDir(id)) ? readdirSync(partsDir(id)) : []).length === 0 ? true : undefined), 5000);
    const again = expectStatus(await putPart(p.upload_url, Buffer.from('{"whole":1}\n')), 200);
    const done = expectStatus(await post(`${uploads('up-cut')}/complete`, { upload_session_id: id, parts: [{ part_number: 1, etag: again.etag }] }), 200);
    expect((await waitRun(done.ingest_run_id)).documents.parsed).toBe(1);
  });
});

describe('complete checks the parts', () => {
  const bytes = pieces(Buffer.from(Array.from({ length: 300 }, (_, i) => JSON.stringify({ n: i, msg: `event ${i}` })).join('\n') + '\n'), 3);
  let id: string;
  let parts: { part_number: number; etag: string }[];

  beforeAll(async () => {
    await createDataset('up-check');
    id = (await session('up-check', 'events.ndjson')).upload_session_id;
    const signed = await urls('up-check', id, [1, 3]);
    parts = [];
    for (const [i, n] of [1, 3].entries()) parts.push({ part_number: n, etag: (await putPart(signed[i].upload_url, bytes[n - 1])).body.etag });
  });

  const complete = (list: { part_number: number; etag: string }[]) => post(`${uploads('up-check')}/complete`, { upload_session_id: id, parts: list });

  it('refuses a missing part, a wrong etag and parts out of order with 422, and ingests nothing', async () => {
    const missing = expectStatus(await complete([parts[0], { part_number: 2, etag: md5(bytes[1]) }, parts[1]]), 422);
    expect(missing.detail).toEqual([expect.objectContaining({ loc: ['body', 'parts', 1, 'part_number'], type: 'missing_part' })]);
    const wrong = expectStatus(await complete([{ part_number: 1, etag: md5('other bytes') }]), 422);
    expect(wrong.detail).toEqual([expect.objectContaining({ loc: ['body', 'parts', 0, 'etag'], type: 'etag_mismatch' })]);
    const order = expectStatus(await complete([parts[1], parts[0]]), 422);
    expect(order.detail[0].type).toBe('part_order');
    expect(await recordCount('up-check')).toBe(0);
    expect(expectStatus(await call('GET', '/v1/ingest/runs?dataset_id=up-check'), 200).runs).toEqual([]);
  });

  it('completes once the missing part is there', async () => {
    const [p2] = await urls('up-check', id, [2]);
    const second = { part_number: 2, etag: expectStatus(await putPart(p2.upload_url, bytes[1]), 200).etag };
    const done = expectStatus(await complete([parts[0], second, parts[1]]), 200);
    expect(done.etag).toBe(md5(Buffer.concat(bytes)));
    expect((await waitRun(done.ingest_run_id)).documents.parsed).toBe(300);
  });
});

describe('abort', () => {
  it('discards the parts; the session then refuses parts, PUT and complete with 409', async () => {
    await createDataset('up-abort');
    const { upload_session_id: id } = await session('up-abort', 'a.ndjson');
    const [p1, p2] = await urls('up-abort', id, [1, 2]);
    const etag = expectStatus(await putPart(p1.upload_url, Buffer.from('{"a":1}\n')), 200).etag;
    expect(readdirSync(partsDir(id))).toHaveLength(1);
    expect(expectStatus(await post(`${uploads('up-abort')}/abort`, { upload_session_id: id }), 200)).toEqual({ upload_session_id: id, status: 'aborted' });
    expect(existsSync(partsDir(id))).toBe(false);
    expectStatus(await post(`${uploads('up-abort')}/parts`, { upload_session_id: id, part_numbers: [1] }), 409);
    expectStatus(await putPart(p2.upload_url, Buffer.from('{"a":2}\n')), 409);
    expectStatus(await post(`${uploads('up-abort')}/complete`, { upload_session_id: id, parts: [{ part_number: 1, etag }] }), 409);
    expectStatus(await post(`${uploads('up-abort')}/abort`, { upload_session_id: id }), 200);
    expect(existsSync(partsDir(id))).toBe(false);
    expect(await recordCount('up-abort')).toBe(0);
  });

  it('cannot abort a completed session (409)', async () => {
    const { upload_session_id: id } = await session('up-abort', 'b.ndjson');
    const parts = await sendAll('up-abort', id, [Buffer.from('{"b":1}\n')]);
    expectStatus(await post(`${uploads('up-abort')}/complete`, { upload_session_id: id, parts }), 200);
    expectStatus(await post(`${uploads('up-abort')}/abort`, { upload_session_id: id }), 409);
  });
});

describe('sessions side by side', () => {
  it('keeps two sessions of one source apart while their parts interleave', async () => {
    await createDataset('up-two');
    const [a, b] = await Promise.all([session('up-two', 'a.ndjson'), session('up-two', 'b.ndjson')]);
    expect(a.key).not.toBe(b.key);
    const bodyOf = (who: string, part: number) => Buffer.from(Array.from({ length: 50 }, (_, i) => JSON.stringify({ who, part, i })).join('\n') + '\n');
    const [ua, ub] = await Promise.all([urls('up-two', a.upload_session_id, [1, 2]), urls('up-two', b.upload_session_id, [1, 2])]);
    const sent = await Promise.all(
      [ua[0], ub[0], ua[1], ub[1]].map(async (p, i) => {
        const who = i % 2 === 0 ? 'a' : 'b';
        return { who, part_number: p.part_number, etag: expectStatus(await putPart(p.upload_url, bodyOf(who, p.part_number)), 200).etag };
      }),
    );
    const done = await Promise.all(
      [a, b].map(async (s, i) => {
        const parts = sent.filter((x) => x.who === (i === 0 ? 'a' : 'b')).map(({ part_number, etag }) => ({ part_number, etag }));
        return expectStatus(await post(`${uploads('up-two')}/complete`, { upload_session_id: s.upload_session_id, parts }), 200);
      }),
    );
    expect(done[0].etag).toBe(md5(Buffer.concat([bodyOf('a', 1), bodyOf('a', 2)])));
    expect(done[1].etag).toBe(md5(Buffer.concat([bodyOf('b', 1), bodyOf('b', 2)])));
    for (const d of done) expect((await waitRun(d.ingest_run_id)).documents.parsed).toBe(100);
    expect(await recordCount('up-two')).toBe(200);
  });
});

describe('ingest tokens', () => {
  it("lets a source's ingest token drive its uploads, and refuses another source's token with 403", async () => {
    const ds = await createDataset('up-tok');
    const other = expectStatus(await call('PUT', '/v1/admin/hosted-sources/9101', { json: { dataset_id: 'up-tok', name: 'other', source_key: 'up-tok-other', source_type: 'hosted' } }), 200);
    const mine = expectStatus(await post(`/v1/admin/sources/${ds.sources[0]}/ingest-token`, undefined), 200).token;
    const theirs = expectStatus(await post(`/v1/admin/sources/${other.source_id}/ingest-token`, undefined), 200).token;

    const s = await session('up-tok', 'tok.ndjson', {}, mine);
    const parts = await sendAll('up-tok', s.upload_session_id, [Buffer.from('{"t":1}\n{"t":2}\n')], mine);
    expectStatus(await post(uploads('up-tok'), { filename: 'x.ndjson' }, theirs), 403);
    expectStatus(await post(`${uploads('up-tok')}/parts`, { upload_session_id: s.upload_session_id, part_numbers: [1] }, theirs), 403);
    expectStatus(await post(`${uploads('up-tok')}/complete`, { upload_session_id: s.upload_session_id, parts }, theirs), 403);
    expectStatus(await post(`${uploads('up-tok')}/abort`, { upload_session_id: s.upload_session_id }, theirs), 403);
    // the other source's token on its own source cannot reach this source's session either
    expectStatus(await post(`${uploads('up-tok-other')}/complete`, { upload_session_id: s.upload_session_id, parts }, theirs), 404);
    const done = expectStatus(await post(`${uploads('up-tok')}/complete`, { upload_session_id: s.upload_session_id, parts }, mine), 200);
    expect((await waitRun(done.ingest_run_id)).documents.parsed).toBe(2);
  });
});

describe('a file name that is a path', () => {
  const source = 'up-names';
  const hosted = () => join(dir.path, 'blobs', admin.tenant_id, 'hosted');
  const lines = (tag: string) => Buffer.from(`{"msg":"${tag} one"}\n{"msg":"${tag} two"}\n`);

  /** The object landed as a file inside the source's own folder, holding the bytes sent; the folder is still a folder. */
  function expectInsideSource(key: string, bytes: Buffer): void {
    expect(key).toMatch(new RegExp(`^${source}/obj_[0-9a-z]{26}/[A-Za-z0-9_-][A-Za-z0-9._-]*$`));
    expect(readFileSync(join(hosted(), key)).equals(bytes)).toBe(true);
    expect(statSync(join(hosted(), source)).isDirectory()).toBe(true);
  }

  beforeAll(() => createDataset(source));

  for (const filename of ['..', '../../x', '.', '../x.ndjson/..']) {
    it(`streamed with filename=${filename}: the object stays inside its source folder, and later ingests work`, async () => {
      const bytes = lines(`stream ${filename}`);
      const res = await call('POST', `/v1/ingest/sources/${source}/stream?format=ndjson&filename=${encodeURIComponent(filename)}`, { body: bytes });
      const run = await waitRun(expectStatus(res, 202).ingest_run_id);
      expect(run).toMatchObject({ status: 'ready', documents: { parsed: 2 } });
      expectInsideSource(run.key, bytes);
      const after = await call('POST', `/v1/ingest/sources/${source}/stream?format=ndjson`, { body: lines(`after stream ${filename}`) });
      expect((await waitRun(expectStatus(after, 202).ingest_run_id)).status).toBe('ready');
    });

    it(`uploaded with filename ${filename}: the object stays inside its source folder, and later ingests work`, async () => {
      const bytes = lines(`upload ${filename}`);
      const s = await session(source, filename, { format: 'ndjson' });
      expect(s.key).toMatch(new RegExp(`^${source}/obj_[0-9a-z]{26}/`));
      const parts = await sendAll(source, s.upload_session_id, [bytes]);
      const done = expectStatus(await post(`${uploads(source)}/complete`, { upload_session_id: s.upload_session_id, parts }), 200);
      expect(done.key).toBe(s.key);
      expectInsideSource(done.key, bytes);
      expect(await waitRun(done.ingest_run_id)).toMatchObject({ status: 'ready', documents: { parsed: 2 } });
      const again = await session(source, 'after.ndjson');
      const more = await sendAll(source, again.upload_session_id, [lines(`after upload ${filename}`)]);
      const next = expectStatus(await post(`${uploads(source)}/complete`, { upload_session_id: again.upload_session_id, parts: more }), 200);
      expect((await waitRun(next.ingest_run_id)).status).toBe('ready');
    });
  }

  it('still picks the format by the extension of the name sent', async () => {
    const s = await session(source, '../../data.csv');
    expect(s.key).toMatch(/\/data\.csv$/);
    const parts = await sendAll(source, s.upload_session_id, [Buffer.from('msg,n\ncsv row,1\n')]);
    const done = expectStatus(await post(`${uploads(source)}/complete`, { upload_session_id: s.upload_session_id, parts }), 200);
    expect(await waitRun(done.ingest_run_id)).toMatchObject({ status: 'ready', format: 'csv', documents: { parsed: 1 } });
  });

  it('keeps every record: nothing was written over the source folder', async () => {
    // 4 names × (stream + the stream after it + upload + the upload after it) × 2 lines, and the csv row
    expect(await recordCount(source)).toBe(4 * 4 * 2 + 1);
  });
});

describe('svc ingest in remote mode', () => {
  it('sends a file as a multipart upload with several parts and waits for its run', async () => {
    await createDataset('up-cli');
    const before = server.logs().split('\n').filter((l) => l.includes('"PUT"')).length;
    const r = svc(['ingest', 'up-cli', apachePath, '--wait', '--output', 'json'], {
      env: { SVC_URL: server.url, SVC_TOKEN: admin.token, SVC_TENANT: admin.tenant_id, SVC_UPLOAD_PART_BYTES: String(256 * 1024) },
    });
    expect(r.status, r.stderr).toBe(0);
    const run = r.json();
    expect(run).toMatchObject({ status: 'ready', input_kind: 'hosted_upload', etag: md5(apache), format: 'text' });
    expect(run.upload_session_id).toMatch(/^upl_/);
    expect(run.documents.parsed).toBe(10_000);
    // the server's log lines reach this process once it is free to read them (spawnSync held it)
    const parts = Math.ceil(apache.length / (256 * 1024));
    const puts = await until('the PUT log lines', async () => {
      const lines = server.logs().split('\n').filter((l) => l.includes('"PUT"')).slice(before).map((l) => JSON.parse(l));
      return lines.length >= parts ? lines : undefined;
    }, 5000);
    expect(puts).toHaveLength(parts);
    expect(puts.every((p) => p.status === 200 && p.url.includes(run.upload_session_id) && p.url.includes('sig=REDACTED'))).toBe(true);
    expect(await recordCount('up-cli')).toBe(10_000);
  });

  it('still streams stdin', async () => {
    const r = svc(['ingest', 'up-cli', '-', '--format', 'ndjson', '--wait', '--output', 'json'], {
      input: '{"from":"stdin"}\n',
      env: { SVC_URL: server.url, SVC_TOKEN: admin.token, SVC_TENANT: admin.tenant_id },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'ready', input_kind: 'stream', upload_session_id: null });
  });
});

describe('expiry', () => {
  let dir2: ReturnType<typeof tempDir>;
  let server2: Server;
  let admin2: { tenant_id: string; token: string };

  beforeAll(async () => {
    dir2 = tempDir();
    admin2 = init(dir2.path);
    Object.assign(process.env, { SVC_UPLOAD_SESSION_SECONDS: '2', SVC_UPLOAD_SWEEP_SECONDS: '1' });
    try {
      server2 = await serve(dir2.path);
    } finally {
      delete process.env.SVC_UPLOAD_SESSION_SECONDS;
      delete process.env.SVC_UPLOAD_SWEEP_SECONDS;
    }
  });

  afterAll(async () => {
    await server2?.stop();
    dir2?.remove();
  });

  it('sweeps an expired session with its parts; the session is then gone', async () => {
    const { post: post2 } = client(server2.url, { token: admin2.token, tenant: admin2.tenant_id });
    expect((await post2('/v1/admin/datasets', { dataset_id: 'exp' })).status).toBe(201);
    const s = (await post2(uploads('exp'), { filename: 'e.ndjson' })).body;
    expect(Date.parse(s.expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    const [p] = (await post2(`${uploads('exp')}/parts`, { upload_session_id: s.upload_session_id, part_numbers: [1], expires_in: 3600 })).body.parts;
    expect(Date.parse(p.expires_at)).toBeLessThanOrEqual(Date.parse(s.expires_at));
    const res = await request(p.upload_url, { method: 'PUT', body: '{"e":1}\n' });
    const etag = ((await res.body.json()) as Json).etag;
    expect(res.statusCode).toBe(200);
    const dirOf = join(dir2.path, 'blobs', admin2.tenant_id, '.uploads', s.upload_session_id);
    expect(existsSync(dirOf)).toBe(true);
    await until('the sweep', async () => (existsSync(dirOf) ? undefined : true), 15_000);
    const after = await post2(`${uploads('exp')}/complete`, { upload_session_id: s.upload_session_id, parts: [{ part_number: 1, etag }] });
    expect(after.status).toBe(404);
  });
});
