import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Invalid, Refused } from '../errors.js';
import { newId } from '../ids.js';

export interface StoredBlob { bucket: string; key: string; etag: string; size: number }

/** Objects on disk under blobs/<tenant>/<bucket>/<key>; written whole or not at all (temp file + rename). */
export class BlobStore {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'blobs');
  }

  path(tenantId: string, bucket: string, key: string): string {
    const base = resolve(this.root, tenantId, bucket);
    const full = resolve(base, key);
    if (!full.startsWith(base + sep)) throw new Invalid(`invalid object key '${key}'`, [{ loc: ['key'], msg: 'key escapes its bucket', type: 'value_error', input: key }]);
    return full;
  }

  /** Streams `input` into the object, hashing as it goes; the etag is the md5 hex of the bytes. */
  async put(tenantId: string, bucket: string, key: string, input: AsyncIterable<Buffer> | NodeJS.ReadableStream, maxBytes = Infinity): Promise<StoredBlob> {
    const path = this.path(tenantId, bucket, key);
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.${newId('tmp')}`;
    const md5 = createHash('md5');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new Refused(`object exceeds ${maxBytes} bytes`, 'object_too_large', 413));
        md5.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(input as AsyncIterable<Buffer>, meter, createWriteStream(tmp));
      renameSync(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    return { bucket, key, etag: md5.digest('hex'), size };
  }

  read(tenantId: string, bucket: string, key: string): AsyncIterable<Buffer> {
    return createReadStream(this.path(tenantId, bucket, key), { highWaterMark: 1 << 20 });
  }

  removeTenantBucket(tenantId: string, bucket: string): void {
    rmSync(resolve(this.root, tenantId, bucket), { recursive: true, force: true });
  }

  remove(tenantId: string, bucket: string, key: string): void {
    rmSync(this.path(tenantId, bucket, key), { force: true });
  }
}
