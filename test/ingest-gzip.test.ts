/**
 * gzip input, told by its magic bytes on every way in: a file given to `svc ingest` (local and
 * remote mode), stdin, the HTTP stream (with and without `Content-Encoding: gzip`) and a hosted
 * upload sent in parts. Real executables, a real server, the Loghub samples gzipped here. The
 * object is stored as sent; a zip bomb and a corrupt stream fail their run with a clear code.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inflated, ObjectRefused } from '../src/engine/ingest/inflate.js';
import { DATA, init, serve, svc, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, until, type Json } from './helpers/http.js';

const LOGHUB = ['Apache', 'BGL', 'HDFS', 'Linux', 'OpenSSH', 'OpenStack'];
const sample = (name: string) => readFileSync(join(DATA, `loghub/${name}/${name}_2k.log`));
/** The records a text ingest makes of `bytes`: one per line with something in it. */
const lineCount = (bytes: Buffer) => bytes.toString('utf8').split('\n').filter((l) => l.trim() !== '').length;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

const hdfs = sample('HDFS');
const hdfsGz = gzipSync(hdfs);
const hdfsLines = lineCount(hdfs);
/** All six samples in one: six batches of records before a cut in the middle of its gzip. */
const all = Buffer.concat(LOGHUB.map((n) => Buffer.concat([sample(n), Buffer.from('\n')])));
const allLines = lineCount(all);
/** 16 MiB of zeros in some 16 KiB: past the 4 MiB decompressed limit the tests set. */
const bomb = gzipSync(Buffer.alloc(16 * 2 ** 20));
const LIMIT = String(4 * 2 ** 20);

async function collect(input: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of input) out.push(c);
  return Buffer.concat(out);
}

/** `bytes` as a stream of `size`-byte chunks. */
const chunks = (bytes: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));

describe('inflated: what a run reads of its object', () => {
  it('passes bytes that are not gzip through as they are, and decompresses gzip whatever the chunking', async () => {
    expect((await collect(inflated(chunks(hdfs, 4096), 2 ** 30))).equals(hdfs)).toBe(true);
    expect((await collect(inflated(chunks(Buffer.from([0x1f]), 1), 10))).equals(Buffer.from([0x1f]))).toBe(true);
    expect((await collect(inflated(chunks(Buffer.alloc(0), 1), 10))).length).toBe(0);
    // the magic split across the first two chunks, and two members one after the other
    expect((await collect(inflated(chunks(hdfsGz, 1), 2 ** 30))).equals(hdfs)).toBe(true);
    const two = Buffer.concat([gzipSync('a\n'), gzipSync('b\n')]);
    expect((await collect(inflated(chunks(two, 7), 100))).toString()).toBe('a\nb\n');
  });

  it('stops a stream that decompresses past the limit, having held no more than a chunk of it', async () => {
    let seen = 0;
    const err = await (async () => {
      for await (const c of inflated(chunks(bomb, 1024), 2 ** 20)) seen += c.length;
    })().catch((e) => e);
    expect(err).toBeInstanceOf(ObjectRefused);
    expect(err).toMatchObject({ code: 'decompressed_too_large' });
    expect(err.message).toContain('1 MiB');
    expect(seen).toBeLessThanOrEqual(2 ** 20);
  });

  it('fails a corrupt or cut gzip stream after the bytes it could decompress', async () => {
    const cut = hdfsGz.subarray(0, Math.floor(hdfsGz.length / 2));
    let got = 0;
    const err = await (async () => {
      for await (const c of inflated(chunks(cut, 4096), 2 ** 30)) got += c.length;
    })().catch((e) => e);
    expect(err).toMatchObject({ code: 'corrupt_gzip' });
    expect(err.message).toMatch(/corrupt or cut short after \d+ decompressed bytes/);
    expect(got).toBeGreaterThan(0);
    const garbled = Buffer.from(hdfsGz);
    garbled.fill(0xff, 10, 60);
    await expect(collect(inflated(chunks(garbled, 4096), 2 ** 30))).rejects.toMatchObject({ code: 'corrupt_gzip' });
  });
});

describe('svc ingest of gzip in local mode', () => {
  const dir = tempDir('svc-gzip-local-');
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], input?: Buffer) => svc(args, { dataDir, input, env: { SVC_INGEST_MAX_DECOMPRESSED_BYTES: LIMIT } });

  let tenant = '';

  beforeAll(() => {
    tenant = init(dataDir).tenant_id;
    writeFileSync(join(dir.path, 'HDFS_2k.log.gz'), hdfsGz);
    // gzip under a name that says nothing of it: its bytes tell
    writeFileSync(join(dir.path, 'hdfs-packed.log'), hdfsGz);
    writeFileSync(join(dir.path, 'bomb.log.gz'), bomb);
    writeFileSync(join(dir.path, 'cut.log.gz'), gzipSync(all).subarray(0, Math.floor(gzipSync(all).length * 0.8)));
    for (const d of ['gz', 'bomb', 'cut']) expect(run(['datasets', 'create', d, '--no-semantic']).status).toBe(0);
  });
  afterAll(() => dir.remove());

  it('decompresses a .gz file, one whose name does not say gzip, and gzip on stdin', () => {
    for (const args of [[join(dir.path, 'HDFS_2k.log.gz')], [join(dir.path, 'hdfs-packed.log')]]) {
      const r = run(['ingest', 'gz', ...args, '--wait', '--output', 'json']);
      expect(r.status, r.stderr).toBe(0);
      // the format comes from the name with .gz set aside: text
      expect(r.json()).toMatchObject({ status: 'ready', format: 'text', documents: { parsed: hdfsLines, malformed: 0 } });
    }
    const piped = run(['ingest', 'gz', '-', '--format', 'text', '--wait', '--output', 'json'], hdfsGz);
    expect(piped.status, piped.stderr).toBe(0);
    expect(piped.json()).toMatchObject({ status: 'ready', input_kind: 'stream', documents: { parsed: hdfsLines } });
    // the same lines three times: a text record's id is its content's, so each is stored once
    expect(run(['datasets', 'get', 'gz', '--output', 'json']).json().record_count).toBe(hdfsLines);
    const hits = run(['search', 'PacketResponder', '--dataset', 'gz', '--output', 'json']).json();
    expect(hits.records.length).toBeGreaterThan(0);
  });

  it('keeps the object as it was sent', () => {
    const r = run(['ingest', 'gz', join(dir.path, 'HDFS_2k.log.gz'), '--wait', '--output', 'json']).json();
    expect(md5(readFileSync(join(dataDir, 'blobs', tenant, r.bucket, r.key)))).toBe(md5(hdfsGz));
    expect(r.etag).toBe(md5(hdfsGz));
  });

  it('fails a gzip bomb at the decompressed limit, with a clear code and nothing left on disk beyond the object', () => {
    const r = run(['ingest', 'bomb', join(dir.path, 'bomb.log.gz'), '--wait', '--output', 'json']);
    expect(r.status).toBe(5);
    expect(r.json()).toMatchObject({ status: 'failed', error_code: 'decompressed_too_large', lifecycle: { repairable: false } });
    expect(r.stderr).toContain('decompressed_too_large: the gzip object decompresses to more than 4 MiB');
  });

  it('fails a cut gzip stream with corrupt_gzip and keeps the records committed before the cut', () => {
    const r = run(['ingest', 'cut', join(dir.path, 'cut.log.gz'), '--wait', '--output', 'json']);
    expect(r.status).toBe(5);
    const failed = r.json();
    expect(failed).toMatchObject({ status: 'failed', error_code: 'corrupt_gzip', lifecycle: { repairable: false } });
    expect(failed.error_message).toContain('corrupt or cut short');
    expect(failed.documents.parsed).toBeGreaterThan(0);
    expect(failed.documents.parsed).toBeLessThan(allLines);
    expect(run(['datasets', 'get', 'cut', '--output', 'json']).json().record_count).toBe(failed.documents.parsed);
    // a retry would fail the same way: the run is not offered one
    expect(run(['runs', 'retry', failed.ingest_run_id]).status).not.toBe(0);
  });
});

describe('gzip through a server: the stream route, hosted uploads, remote mode', () => {
  const dir = tempDir('svc-gzip-remote-');
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let admin: { tenant_id: string; user_id: string; token: string };
  const { call } = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));
  const remote = (args: string[], input?: Buffer) => svc(args, { dataDir: join(dir.path, 'none'), input, env: { SVC_URL: server.url, SVC_TOKEN: admin.token, SVC_UPLOAD_PART_BYTES: '8192' } }); // a file goes in several parts
  const waitRun = (id: string) =>
    until(`run ${id}`, async () => {
      const r = expectStatus(await call('GET', `/v1/ingest/runs/${id}`), 200);
      return r.status === 'ready' || r.status === 'failed' ? r : undefined;
    });
  const blob = (r: Json) => readFileSync(join(dataDir, 'blobs', admin.tenant_id, r.bucket, r.key));

  beforeAll(async () => {
    admin = init(dataDir);
    server = await serve(dataDir, { env: { SVC_INGEST_MAX_DECOMPRESSED_BYTES: LIMIT, SVC_UPLOAD_PART_MAX_BYTES: String(2 ** 16) } });
    for (const d of ['rgz', 'rbomb']) expectStatus(await call('POST', '/v1/admin/datasets', { json: { dataset_id: d, semantic: false } }), 201);
    writeFileSync(join(dir.path, 'HDFS_2k.log.gz'), hdfsGz);
    writeFileSync(join(dir.path, 'bomb.log.gz'), bomb);
  });
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('decodes a gzip stream once, with or without Content-Encoding: gzip, and stores it as sent', async () => {
    for (const headers of [{}, { 'content-encoding': 'gzip' }] as Record<string, string>[]) {
      const accepted = expectStatus(await call('POST', '/v1/ingest/sources/rgz/stream?format=text', { body: hdfsGz, headers }), 202);
      const r = await waitRun(accepted.ingest_run_id);
      expect(r, JSON.stringify(headers)).toMatchObject({ status: 'ready', documents: { parsed: hdfsLines, malformed: 0 } });
      expect(blob(r).equals(hdfsGz)).toBe(true);
    }
  });

  it('refuses a Content-Encoding it cannot read before storing anything', async () => {
    const res = await call('POST', '/v1/ingest/sources/rgz/stream?format=text', { body: Buffer.from('x\n'), headers: { 'content-encoding': 'br' } });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatchObject({ code: 'unsupported_content_encoding' });
  });

  it('decompresses a .gz sent as a hosted upload in several parts', async () => {
    const session = expectStatus(await call('POST', '/v1/ingest/sources/rgz/uploads', { json: { filename: 'HDFS_2k.log.gz', size_bytes: hdfsGz.length } }), 201);
    const size = Math.ceil(hdfsGz.length / 3);
    const bytes = [0, 1, 2].map((i) => hdfsGz.subarray(i * size, (i + 1) * size));
    const signed = expectStatus(await call('POST', '/v1/ingest/sources/rgz/uploads/parts', { json: { upload_session_id: session.upload_session_id, part_numbers: [1, 2, 3] } }), 200).parts;
    const parts = [];
    for (const [i, p] of signed.entries()) {
      const res = expectStatus(await call('PUT', p.upload_url, { body: bytes[i], token: null, tenant: null }), 200);
      parts.push({ part_number: p.part_number, etag: res.etag });
    }
    const done = expectStatus(await call('POST', '/v1/ingest/sources/rgz/uploads/complete', { json: { upload_session_id: session.upload_session_id, parts } }), 200);
    const r = await waitRun(done.ingest_run_id);
    expect(r).toMatchObject({ status: 'ready', input_kind: 'hosted_upload', format: 'text', documents: { parsed: hdfsLines } });
    expect(blob(r).equals(hdfsGz)).toBe(true);
  });

  it('svc ingest in remote mode decompresses a file (sent as an upload) and stdin (sent as a stream)', () => {
    const file = remote(['ingest', 'rgz', join(dir.path, 'HDFS_2k.log.gz'), '--wait', '--output', 'json']);
    expect(file.status, file.stderr).toBe(0);
    expect(file.json()).toMatchObject({ status: 'ready', input_kind: 'hosted_upload', format: 'text', documents: { parsed: hdfsLines } });
    const piped = remote(['ingest', 'rgz', '-', '--format', 'text', '--wait', '--output', 'json'], hdfsGz);
    expect(piped.status, piped.stderr).toBe(0);
    expect(piped.json()).toMatchObject({ status: 'ready', input_kind: 'stream', documents: { parsed: hdfsLines } });
  });

  it('fails a bomb sent to the server with decompressed_too_large', async () => {
    const r = remote(['ingest', 'rbomb', join(dir.path, 'bomb.log.gz'), '--wait', '--output', 'json']);
    expect(r.status).toBe(5);
    expect(r.json()).toMatchObject({ status: 'failed', error_code: 'decompressed_too_large' });
    const accepted = expectStatus(await call('POST', '/v1/ingest/sources/rbomb/stream?format=text', { body: bomb, headers: { 'content-encoding': 'gzip' } }), 202);
    expect(await waitRun(accepted.ingest_run_id)).toMatchObject({ status: 'failed', error_code: 'decompressed_too_large' });
  });
});
