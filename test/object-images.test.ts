/**
 * Image objects: PNG, JPEG, GIF and WebP told by their magic bytes (never a file name), ingested as
 * one record with their dimensions, marked on the completed upload, and served by a signed URL of
 * this server (GET /v1/object-image-url). Real images are written byte by byte here; a real server
 * takes real uploads and streams.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { imageType, IMAGE_HEAD_BYTES } from '../src/engine/ingest/image.js';
import { imageQuery } from '../src/engine/images/imageSigning.js';
import { loadSecret } from '../src/engine/auth/secret.js';
import { downloadQuery } from '../src/engine/exports/downloadSigning.js';
import { useApp } from './helpers/app.js';
import { expectStatus, until, type Json } from './helpers/http.js';

// ---- tiny real images ----

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const byte of b) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid RGB PNG of w×h pixels. */
function png(w: number, h: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.concat(Array.from({ length: h }, (_, y) => Buffer.concat([Buffer.from([0]), Buffer.alloc(w * 3, y * 40)])));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A baseline JPEG's markers: SOI, a JFIF APP0, an APP1 of `pad` bytes, a DQT, then SOF0 with w×h, then EOI. */
function jpeg(w: number, h: number, pad = 100): Buffer {
  const seg = (marker: number, data: Buffer) => {
    const head = Buffer.from([0xff, marker, 0, 0]);
    head.writeUInt16BE(data.length + 2, 2);
    return Buffer.concat([head, data]);
  };
  const sof = Buffer.from([8, 0, 0, 0, 0, 1, 1, 0x11, 0]);
  sof.writeUInt16BE(h, 1);
  sof.writeUInt16BE(w, 3);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    seg(0xe0, Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])),
    seg(0xe1, Buffer.alloc(pad, 0x45)),
    seg(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    seg(0xc0, sof),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A valid one-colour GIF89a of w×h. */
function gif(w: number, h: number): Buffer {
  const lsd = Buffer.alloc(7);
  lsd.writeUInt16LE(w, 0);
  lsd.writeUInt16LE(h, 2);
  lsd.set([0x80, 0, 0], 4);
  const desc = Buffer.alloc(10);
  desc[0] = 0x2c;
  desc.writeUInt16LE(w, 5);
  desc.writeUInt16LE(h, 7);
  return Buffer.concat([Buffer.from('GIF89a'), lsd, Buffer.from([0, 0, 0, 255, 255, 255]), desc, Buffer.from([2, 2, 0x44, 0x01, 0, 0x3b])]);
}

function riff(fourcc: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(20);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(12 + payload.length, 4);
  head.write('WEBP', 8, 'latin1');
  head.write(fourcc, 12, 'latin1');
  head.writeUInt32LE(payload.length, 16);
  return Buffer.concat([head, payload, payload.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}
/** Lossless WebP header (VP8L) for w×h. */
function webpLossless(w: number, h: number): Buffer {
  const bits = Buffer.alloc(4);
  bits.writeUInt32LE(((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14));
  return riff('VP8L', Buffer.concat([Buffer.from([0x2f]), bits, Buffer.alloc(8)]));
}
/** Lossy WebP header (VP8) for w×h. */
function webpLossy(w: number, h: number): Buffer {
  const p = Buffer.alloc(20);
  p.set([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a], 0); // key frame tag, start code
  p.writeUInt16LE(w, 6);
  p.writeUInt16LE(h, 8);
  return riff('VP8 ', p);
}
/** Extended WebP header (VP8X) for a w×h canvas. */
function webpExtended(w: number, h: number): Buffer {
  const p = Buffer.alloc(10);
  p.writeUIntLE(w - 1, 4, 3);
  p.writeUIntLE(h - 1, 7, 3);
  return riff('VP8X', p);
}

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

describe('image types by magic bytes', () => {
  it('reads the dimensions of PNG, JPEG, GIF and WebP (VP8, VP8L, VP8X)', () => {
    expect(imageType(png(3, 2))).toEqual({ content_type: 'image/png', width: 3, height: 2 });
    expect(imageType(jpeg(640, 480))).toEqual({ content_type: 'image/jpeg', width: 640, height: 480 });
    expect(imageType(gif(5, 7))).toEqual({ content_type: 'image/gif', width: 5, height: 7 });
    expect(imageType(webpLossless(300, 200))).toEqual({ content_type: 'image/webp', width: 300, height: 200 });
    expect(imageType(webpLossy(17, 9))).toEqual({ content_type: 'image/webp', width: 17, height: 9 });
    expect(imageType(webpExtended(4000, 3000))).toEqual({ content_type: 'image/webp', width: 4000, height: 3000 });
  });

  it('is null for text, a truncated header, or a JPEG whose frame header lies past the bounded head', () => {
    expect(imageType(Buffer.from('hello world\n'))).toBeNull();
    expect(imageType(png(3, 2).subarray(0, 20))).toBeNull();
    expect(imageType(Buffer.from('GIF8'))).toBeNull();
    expect(imageType(jpeg(10, 10, 60_000))).toEqual({ content_type: 'image/jpeg', width: 10, height: 10 });
    const far = jpeg(10, 10, 65_500);
    expect(far.length).toBeGreaterThan(IMAGE_HEAD_BYTES);
    expect(imageType(far.subarray(0, IMAGE_HEAD_BYTES))).toBeNull();
  });
});

describe('image objects over HTTP', () => {
  const { t, http } = useApp();
  const uploads = (source: string) => `/v1/ingest/sources/${source}/uploads`;
  const waitRun = (id: string) =>
    until(`run ${id}`, async () => {
      const run = expectStatus(await http.get(`/v1/ingest/runs/${id}`), 200);
      return run.status === 'ready' || run.status === 'failed' ? run : undefined;
    });

  /** A hosted upload of `bytes` in one part; returns the completed upload. */
  async function upload(source: string, filename: string, bytes: Buffer, extra: Record<string, unknown> = {}): Promise<Json> {
    const s = expectStatus(await http.post(uploads(source), { filename, ...extra }), 201);
    const [part] = expectStatus(await http.post(`${uploads(source)}/parts`, { upload_session_id: s.upload_session_id, part_numbers: [1] }), 200).parts;
    const put = expectStatus(await http.call('PUT', part.upload_url, { body: bytes, token: null, tenant: null }), 200);
    return expectStatus(await http.post(`${uploads(source)}/complete`, { upload_session_id: s.upload_session_id, parts: [{ part_number: 1, etag: put.etag }] }), 200);
  }
  const search = async (dataset: string, as?: { token: string; tenant: string }) =>
    expectStatus(await http.post('/v1/search', { datasets: [dataset], limit: 50 }, as), 200).records as Json[];
  const imageUrl = (q: Record<string, string | number>, as?: { token: string; tenant: string }) =>
    http.get(`/v1/object-image-url?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`, as);
  const fetchRaw = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  const pic = png(3, 2);
  let completed: Json;

  it('an uploaded PNG (named like a log) becomes one record with its dimensions, and the upload names it as image_reference', async () => {
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'imgs', semantic: false }), 201);
    completed = await upload('imgs', 'holiday.log', pic);
    expect(completed.image_reference).toBe(completed.key);
    const run = await waitRun(completed.ingest_run_id);
    expect(run).toMatchObject({ status: 'ready', etag: md5(pic) });
    expect(run.documents.parsed).toBe(1);
    const records = await search('imgs');
    expect(records).toHaveLength(1);
    expect(records[0].body).toBe('holiday.log');
    expect(records[0].metadata).toEqual({ content_type: 'image/png', width: 3, height: 2, bytes: pic.length });
    expect(records[0].provenance).toMatchObject({ line: 1 });
  });

  it('a text file named .png is text; JPEG, GIF and WebP streamed in are one record each', async () => {
    const text = await upload('imgs', 'fake.png', Buffer.from('line one\nline two\n'), { format: 'text' });
    expect(text.image_reference).toBeNull();
    expect((await waitRun(text.ingest_run_id)).documents.parsed).toBe(2);
    for (const [name, bytes, meta] of [
      ['cat.jpg', jpeg(640, 480), { content_type: 'image/jpeg', width: 640, height: 480 }],
      ['anim.gif', gif(5, 7), { content_type: 'image/gif', width: 5, height: 7 }],
      [undefined, webpLossless(300, 200), { content_type: 'image/webp', width: 300, height: 200 }],
    ] as const) {
      expectStatus(await http.post('/v1/admin/datasets', { dataset_id: `one-${meta.content_type.slice(6)}`, semantic: false }), 201);
      const q = name ? `?filename=${name}` : '';
      const accepted = expectStatus(await http.call('POST', `/v1/ingest/sources/one-${meta.content_type.slice(6)}/stream${q}`, { body: bytes }), 202);
      expect((await waitRun(accepted.ingest_run_id)).documents.parsed).toBe(1);
      const [rec] = await search(`one-${meta.content_type.slice(6)}`);
      expect(rec.body).toBe(name ?? 'image');
      expect(rec.metadata).toEqual({ ...meta, bytes: bytes.length });
    }
  });

  it('GET /v1/object-image-url signs a URL that serves the same bytes with their type and nosniff, for five minutes', async () => {
    const before = Date.now();
    const res = expectStatus(await imageUrl({ key: completed.key, line: 1, dataset_id: 'imgs' }), 200);
    expect(res.content_type).toBe('image/png');
    const expires = Date.parse(res.expires_at);
    expect(expires - before).toBeGreaterThan(299_000);
    expect(expires - before).toBeLessThanOrEqual(301_000);
    expect(res.url.startsWith(`${t.url}/v1/object-images/download?`)).toBe(true);
    const got = await fetchRaw(res.url); // no token: the signature is the credential
    expect(got.status).toBe(200);
    expect(got.bytes.equals(pic)).toBe(true);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('a tampered or expired URL is 403', async () => {
    const res = expectStatus(await imageUrl({ key: completed.key, line: 1, dataset_id: 'imgs' }), 200);
    const url = new URL(res.url);
    const variant = (change: (u: URL) => void) => {
      const u = new URL(url);
      change(u);
      return u.toString();
    };
    const sig = url.searchParams.get('sig')!;
    const cases = [
      variant((u) => u.searchParams.set('sig', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1))),
      variant((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))),
      variant((u) => u.searchParams.set('key', completed.key.replace('holiday', 'other'))),
      variant((u) => u.searchParams.set('tenant', 'ten_someone_else')),
      variant((u) => u.searchParams.delete('sig')),
    ];
    const secret = loadSecret(t.engine.dataDir);
    const past = Math.floor(Date.now() / 1000) - 1;
    cases.push(`${url.origin}${url.pathname}?${imageQuery(secret, { tenant: t.admin.tenant_id, bucket: completed.bucket, key: completed.key, expires: past })}`);
    for (const c of cases) {
      const got = await fetchRaw(c);
      expect(got.status, c).toBe(403);
      expect(got.bytes.equals(pic)).toBe(false);
    }
    // an export download's signature, made with the same secret over the same names, is no image signature
    const download = new URLSearchParams(downloadQuery(secret, { tenant: t.admin.tenant_id, export_id: completed.key, expires: past + 600 }));
    const swapped = variant((u) => {
      u.searchParams.set('expires', download.get('expires')!);
      u.searchParams.set('sig', download.get('sig')!);
    });
    expect((await fetchRaw(swapped)).status).toBe(403);
  });

  it('a text record is 404 "not an image"; an unknown record is 404; bad parameters are 422', async () => {
    const text = (await search('imgs')).find((r) => r.body === 'line two')!;
    const notImage = expectStatus(await imageUrl({ key: text.provenance.source_key, line: 2, dataset_id: 'imgs' }), 404);
    expect(notImage.detail).toMatch(/not an image/);
    expect(expectStatus(await imageUrl({ key: completed.key, line: 2, dataset_id: 'imgs' }), 404).detail).toMatch(/no record/);
    expectStatus(await imageUrl({ key: 'nope/key', line: 1, dataset_id: 'imgs' }), 404);
    expectStatus(await imageUrl({ key: completed.key, line: 1, dataset_id: 'missing' }), 404);
    expectStatus(await imageUrl({ key: completed.key, line: 0, dataset_id: 'imgs' }), 422);
    expectStatus(await imageUrl({ key: 'k'.repeat(2049), line: 1, dataset_id: 'imgs' }), 422);
    expectStatus(await imageUrl({ key: completed.key, line: 1, dataset_id: 'd'.repeat(256) }), 422);
    expectStatus(await imageUrl({ key: completed.key, line: 'x', dataset_id: 'imgs' }), 422);
    expectStatus(await http.get(`/v1/object-image-url?line=1&dataset_id=imgs`), 422);
  });

  it("another tenant's object is 404, even through a record that names its key", async () => {
    const other = await t.engine.directory.createTenant('other', 'other-admin@example.test');
    const as = { token: await t.engine.sessions.issue(other.user.user_id, 3600), tenant: other.tenant.tenant_id };
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'imgs', semantic: false }, as), 201);
    // the same dataset id and key in the other tenant: nothing of the first tenant is found
    expectStatus(await imageUrl({ key: completed.key, line: 1, dataset_id: 'imgs' }, as), 404);
    // a record of the other tenant whose image field names the first tenant's object
    const [source] = expectStatus(await http.get('/v1/admin/sources?dataset_id=imgs', as), 200).sources;
    const { dataset_id, name, source_key, source_type, parse_config, search_config } = source;
    const semantic_config = { image_embeddings: { fields: [{ field: 'image_key' }], index_standalone: false } };
    expectStatus(await http.put(`/v1/admin/hosted-sources/${source.source_id}`, { dataset_id, name, source_key, source_type, parse_config, search_config, semantic_config }, as), 200);
    const body = JSON.stringify({ id: 'steal', image_key: completed.key }) + '\n';
    const accepted = expectStatus(await http.call('POST', '/v1/ingest/sources/imgs/stream?format=ndjson', { body, ...as }), 202);
    const run = await until('the other run', async () => {
      const r = expectStatus(await http.get(`/v1/ingest/runs/${accepted.ingest_run_id}`, as), 200);
      return r.status === 'ready' || r.status === 'failed' ? r : undefined;
    });
    expect(run.status).toBe('ready');
    expect(expectStatus(await imageUrl({ key: run.key, line: 1, dataset_id: 'imgs' }, as), 404).detail).toMatch(/not an image object of this tenant/);
  });

  it("a record whose source's first image_embeddings field names an image object of the tenant serves that object", async () => {
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'catalog', semantic: false }), 201);
    const [source] = expectStatus(await http.get('/v1/admin/sources?dataset_id=catalog'), 200).sources;
    const { dataset_id, name, source_key, source_type, parse_config, search_config } = source;
    const semantic_config = { image_embeddings: { fields: [{ field: 'image_key' }], index_standalone: false } };
    expectStatus(await http.put(`/v1/admin/hosted-sources/${source.source_id}`, { dataset_id, name, source_key, source_type, parse_config, search_config, semantic_config }), 200);
    // the second line names its own id: found by the bounded scan, not a derived id
    const body = [{ sku: 'a', image_key: completed.key }, { id: 'sku-b', sku: 'b', image_key: 'not/there.png' }].map((r) => JSON.stringify(r)).join('\n') + '\n';
    const accepted = expectStatus(await http.call('POST', '/v1/ingest/sources/catalog/stream?format=ndjson', { body }), 202);
    const run = await waitRun(accepted.ingest_run_id);
    expect(run.status).toBe('ready');
    const res = expectStatus(await imageUrl({ key: run.key, line: 1, dataset_id: 'catalog' }), 200);
    expect(res.content_type).toBe('image/png');
    const got = await fetchRaw(res.url);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(pic)).toBe(true);
    expect(expectStatus(await imageUrl({ key: run.key, line: 2, dataset_id: 'catalog' }), 404).detail).toMatch(/not an image/);
  });
});
