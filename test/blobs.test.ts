/**
 * The blob store's paths: keys are made in one place from a sanitised name, and a path is only
 * ever inside its tenant's folder and its bucket.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { cleanFilename, KEY_NAME_MAX, newObjectKey, safeName } from '../src/engine/blobs/objectKey.js';
import { BlobStore } from '../src/engine/blobs/store.js';
import { DiskFull, Invalid } from '../src/engine/errors.js';
import { tempDir } from './helpers/cli.js';

const dir = tempDir();
afterAll(() => dir.remove());

describe('object keys', () => {
  it('never make a name of ., .., nothing, a separator or a NUL', () => {
    for (const hostile of ['.', '..', '...', '', ' ', '/', '\\', '../', '..\\..', '\0', '.\0.', '/..', '\u0085..']) {
      const name = safeName(hostile, 'stream');
      expect(name, JSON.stringify(hostile)).toBe('stream');
    }
    expect(safeName('../../x', 'stream')).toBe('x');
    expect(safeName('..\\..\\windows\\system.ini', 'stream')).toBe('system.ini');
    expect(safeName('/etc/passwd', 'stream')).toBe('passwd');
    expect(safeName('a\0b.log', 'stream')).toBe('ab.log');
    expect(safeName('.env', 'stream')).toBe('env');
    expect(safeName('..hidden.csv', 'stream')).toBe('hidden.csv');
    expect(safeName('журнал 2024.ndjson', 'stream')).toBe('_2024.ndjson');
    expect(safeName('access log (1).log', 'stream')).toBe('access_log_1_.log');
    for (const name of ['apache_access_combined.log', 'HDFS_2k.log_structured.csv', 'a-b.c.jsonl']) expect(safeName(name, 'stream')).toBe(name);
  });

  it('cap the name, keeping its extension', () => {
    const long = safeName(`${'x'.repeat(5000)}.ndjson`, 'stream');
    expect(long).toHaveLength(KEY_NAME_MAX);
    expect(long.endsWith('.ndjson')).toBe(true);
    expect(safeName('y'.repeat(300), 'stream')).toBe('y'.repeat(KEY_NAME_MAX));
  });

  it('are <source key>/<object id>/<safe name>, a new id each time', () => {
    const a = newObjectKey('logs', '../../x.log');
    const b = newObjectKey('logs', '../../x.log');
    expect(a).toMatch(/^logs\/obj_[0-9a-z]{26}\/x\.log$/);
    expect(b).not.toBe(a);
    expect(newObjectKey('logs', undefined)).toMatch(/^logs\/obj_[0-9a-z]{26}\/stream$/);
    expect(newObjectKey('logs', '..', 'upload')).toMatch(/^logs\/obj_[0-9a-z]{26}\/upload$/);
  });

  it('keep the client file name as metadata: its last segment, no control characters, capped', () => {
    expect(cleanFilename('C:\\logs\\app.log')).toBe('app.log');
    expect(cleanFilename('../../x.csv')).toBe('x.csv');
    expect(cleanFilename('a\0b\r\n.log')).toBe('ab.log');
    expect(cleanFilename('..')).toBe('..'); // data, never a path: only keys must avoid it
    expect(cleanFilename('dir/')).toBeUndefined();
    expect(cleanFilename('z'.repeat(LIMITS.filename + 50))).toHaveLength(LIMITS.filename);
    expect(cleanFilename(`${'z'.repeat(LIMITS.filename)}.csv`)).toMatch(/^z+\.csv$/);
  });
});

describe('BlobStore.path', () => {
  const blobs = new BlobStore(dir.path);
  const root = join(dir.path, 'blobs');
  const refusal = (f: () => unknown): string => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(Invalid);
      return (err as Error).message;
    }
    throw new Error('not refused');
  };

  it('resolves a plain key inside its tenant and bucket', () => {
    expect(blobs.path('ten_a', 'hosted', 'logs/obj_1/x.log')).toBe(join(root, 'ten_a', 'hosted', 'logs', 'obj_1', 'x.log'));
    expect(blobs.path('ten_a', '.uploads', 'upl_1/3.p_2')).toBe(join(root, 'ten_a', '.uploads', 'upl_1', '3.p_2'));
  });

  it('refuses ., .. and empty key segments outright, even ones that would resolve inside', () => {
    for (const key of ['..', '.', '', 'logs/obj_1/..', 'logs/obj_1/.', 'logs/../logs/x', 'logs//x', '/abs', 'logs/x/', '../../ten_b/hosted/x', 'a/\0/b', 'a\\..\\b']) {
      expect(refusal(() => blobs.path('ten_a', 'hosted', key)), JSON.stringify(key)).toMatch(/invalid object key/);
    }
  });

  it('refuses a tenant or bucket that is not one plain segment', () => {
    for (const [tenant, bucket] of [['..', 'hosted'], ['.', 'hosted'], ['', 'hosted'], ['a/b', 'hosted'], ['ten_a', '..'], ['ten_a', '.'], ['ten_a', ''], ['ten_a', '../ten_b'], ['ten_a', 'x\0']]) {
      expect(refusal(() => blobs.path(tenant, bucket, 'k')), `${tenant} ${bucket}`).toMatch(/invalid object (tenant|bucket)/);
    }
  });

  it('stores and reads back an object under a generated key, and refuses to write at a folder of the store', async () => {
    const key = newObjectKey('logs', '..');
    const stored = await blobs.put('ten_a', 'hosted', key, Readable.from([Buffer.from('one\n')]));
    expect(readFileSync(join(root, 'ten_a', 'hosted', key), 'utf8')).toBe('one\n');
    expect(stored.etag).toBe(createHash('md5').update('one\n').digest('hex'));
    mkdirSync(join(root, 'ten_a', 'hosted', 'logs', 'obj_x'), { recursive: true });
    writeFileSync(join(root, 'ten_a', 'hosted', 'keep'), 'kept');
    await expect(blobs.put('ten_a', 'hosted', 'logs/obj_x/..', Readable.from([Buffer.from('x')]))).rejects.toBeInstanceOf(Invalid);
    expect(() => blobs.remove('ten_a', 'hosted', 'logs/..')).toThrow(Invalid);
    expect(existsSync(join(root, 'ten_a', 'hosted', 'logs', 'obj_x'))).toBe(true);
    expect(readFileSync(join(root, 'ten_a', 'hosted', 'keep'), 'utf8')).toBe('kept');
  });
});

describe('a long write', () => {
  it('asks for free space every 64 MiB and stops, leaving nothing, when there is none', async () => {
    const store = new BlobStore(join(dir.path, 'space'));
    let checks = 0;
    const chunks = function* () {
      for (let i = 0; i < 200; i++) yield Buffer.alloc(2 ** 20, i); // 200 MiB
    };
    const refused = store.put('t1', 'b', 'k/big.log', Readable.from(chunks()), Infinity, () => {
      if (++checks === 2) throw new DiskFull('no room');
    });
    await expect(refused).rejects.toBeInstanceOf(DiskFull);
    expect(checks).toBe(2); // at 64 and 128 MiB
    expect(existsSync(store.path('t1', 'b', 'k/big.log'))).toBe(false);
    const blob = await store.put('t1', 'b', 'k/small.log', Readable.from([Buffer.from('fine\n')]), Infinity, () => {
      throw new DiskFull('never asked: less than 64 MiB');
    });
    expect(blob.size).toBe(5);
  });
});
