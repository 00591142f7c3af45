import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { asDiskFull, diskWriteSync } from '../diskErrors.js';
import { Invalid, Refused } from '../errors.js';
import { newTempFile, sweepTempFiles, TEMP_DIR } from './tempFiles.js';
import { layout } from '../layout.js';

const SPACE_CHECK_BYTES = 64 * 2 ** 20;

export interface StoredBlob { bucket: string; key: string; etag: string; size: number }

/** Why a name cannot be one segment of a blob path ("is empty", "is '..'", …), or null when it can. */
function segmentProblem(name: string): string | null {
  if (name === '') return 'is empty';
  if (name === '.' || name === '..') return `is '${name}'`;
  if (/[/\\\0]/.test(name)) return 'holds a separator or NUL';
  return null;
}

const refused = (what: string, value: string, why: string) =>
  new Invalid(`invalid object ${what} '${value.slice(0, 200)}': ${why}`, [{ loc: [what], msg: why, type: 'value_error', input: value }]);

/**
 * Objects on disk under blobs/<tenant>/<bucket>/<key>; written whole or not at all: into a temp
 * file of the tenant (see tempFiles.ts), then renamed into place.
 */
export class BlobStore {
  private readonly root: string;

  constructor(dataDir: string) {
    this.root = resolve(layout.blobs(dataDir));
  }

  /**
   * Where an object lives. Tenant and bucket must each be one plain segment and every segment of
   * the key too: a `.`, `..` or empty segment is refused, never resolved, so that no key can name
   * a folder of the store or anything outside its own tenant and bucket.
   */
  path(tenantId: string, bucket: string, key: string): string {
    const base = this.bucketDir(tenantId, bucket);
    for (const segment of key.split('/')) {
      const why = segmentProblem(segment);
      if (why) throw refused('key', key, `a segment of the key ${why}`);
    }
    const full = join(base, key);
    if (!full.startsWith(base + sep)) throw refused('key', key, 'the key escapes its bucket');
    return full;
  }

  private bucketDir(tenantId: string, bucket: string): string {
    const tenantWhy = segmentProblem(tenantId);
    if (tenantWhy) throw refused('tenant', tenantId, `the tenant id ${tenantWhy}`);
    const bucketWhy = bucket === TEMP_DIR ? `is '${TEMP_DIR}', the folder of objects being written` : segmentProblem(bucket);
    if (bucketWhy) throw refused('bucket', bucket, `the bucket ${bucketWhy}`);
    const tenantDir = join(this.root, tenantId);
    const base = join(tenantDir, bucket);
    if (!tenantDir.startsWith(this.root + sep) || !base.startsWith(tenantDir + sep)) throw refused('bucket', bucket, 'the bucket escapes its tenant');
    return base;
  }

  /** Streams `input` into the object, hashing as it goes; the etag is the md5 hex of the bytes. */
  /** `checkSpace` runs every 64 MiB written: a long stream stops at the free-space floor, not at a full disk. */
  async put(tenantId: string, bucket: string, key: string, input: AsyncIterable<Buffer> | NodeJS.ReadableStream, maxBytes = Infinity, checkSpace?: () => void): Promise<StoredBlob> {
    const path = this.path(tenantId, bucket, key);
    const tmp = diskWriteSync('an object', () => {
      mkdirSync(dirname(path), { recursive: true });
      return newTempFile(join(this.root, tenantId));
    });
    const md5 = createHash('md5');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        const before = size;
        size += chunk.length;
        if (size > maxBytes) return done(new Refused(`object exceeds ${maxBytes} bytes`, 'object_too_large', 413));
        if (checkSpace && Math.floor(size / SPACE_CHECK_BYTES) > Math.floor(before / SPACE_CHECK_BYTES)) {
          try {
            checkSpace();
          } catch (err) {
            return done(err as Error);
          }
        }
        md5.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(input as AsyncIterable<Buffer>, meter, createWriteStream(tmp));
      renameSync(tmp, path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw asDiskFull(err, 'an object');
    }
    return { bucket, key, etag: md5.digest('hex'), size };
  }

  /**
   * An empty folder of the tenant's temp area for a writer that needs files of its own before its
   * object is put (an export's Parquet work); `name` is one plain segment. The caller removes it.
   */
  workDir(tenantId: string, name: string): string {
    const why = segmentProblem(name) ?? segmentProblem(tenantId);
    if (why) throw refused('work folder', name, `the name ${why}`);
    const dir = join(this.root, tenantId, TEMP_DIR, name);
    rmSync(dir, { recursive: true, force: true }); // what a killed writer left
    diskWriteSync('a work folder', () => mkdirSync(dir, { recursive: true }));
    return dir;
  }

  /** Removes a work folder and whatever is in it. */
  removeWorkDir(tenantId: string, name: string): void {
    if (segmentProblem(name) || segmentProblem(tenantId)) return;
    rmSync(join(this.root, tenantId, TEMP_DIR, name), { recursive: true, force: true });
  }

  /** Removes temp files that writers killed mid-object left behind (see sweepTempFiles). */
  sweepTemp(maxAgeMs?: number): number {
    return sweepTempFiles(this.root, maxAgeMs);
  }

  read(tenantId: string, bucket: string, key: string): AsyncIterable<Buffer> {
    return createReadStream(this.path(tenantId, bucket, key), { highWaterMark: 1 << 20 });
  }

  removeTenantBucket(tenantId: string, bucket: string): void {
    rmSync(this.bucketDir(tenantId, bucket), { recursive: true, force: true });
  }

  remove(tenantId: string, bucket: string, key: string): void {
    rmSync(this.path(tenantId, bucket, key), { force: true });
  }
}
