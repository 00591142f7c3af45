import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { ObjectImageQuery, ObjectImageUrl, ObjectImageUrlQuery } from '../../api/images.js';
import type { Source } from '../../api/sources.js';
import type { Caller } from '../auth/caller.js';
import type { BlobStore } from '../blobs/store.js';
import type { Datasets } from '../datasets/datasets.js';
import { NotFound } from '../errors.js';
import { sniffImage, type ImageInfo } from '../ingest/image.js';
import type { RunState } from '../ingest/runs.js';
import { lineIds } from '../ingest/transform.js';
import type { StoredRecord } from '../records.js';
import { fieldValue } from '../search/fieldValue.js';
import type { Sources } from '../sources/sources.js';
import { scanPrefix, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';
import { imageQuery, verifyImage } from './imageSigning.js';

/** How long an image URL stays valid. */
export const IMAGE_URL_SECONDS = 300;

/**
 * A record whose id is not derived from its object and line (an id field named it) is looked for
 * among the dataset's newest records, at most this many: a lookup never reads a whole large dataset.
 */
export const IMAGE_SCAN_RECORDS = 10_000;

/** An image object, opened for reading. */
export interface OpenedImage { body: Readable; content_type: string; size: number }

/**
 * Image URLs for records: the record a dataset holds from (object key, line) — found by the id a
 * text or image line is given (its source key, the object's etag from the runs that read it, the
 * line), else among the newest IMAGE_SCAN_RECORDS records — and the image it stands for: its own
 * object when that is an image, else the object its source's first image_embeddings field names.
 * The URL is this server's, signed with the data dir's secret for the tenant, valid five minutes.
 */
export class ObjectImages {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    private readonly blobs: BlobStore,
    private readonly secret: Buffer,
  ) {}

  url(caller: Caller, q: ObjectImageUrlQuery, origin: string, nowMs = Date.now()): ObjectImageUrl {
    const t = caller.tenant_id;
    this.datasets.state(t, q.dataset_id); // 404 for a dataset the tenant has not
    const rec = this.record(t, q.dataset_id, q.key, q.line);
    if (!rec) throw new NotFound(`no record of dataset '${q.dataset_id}' comes from line ${q.line} of object '${q.key}'`);
    const { bucket, key, image } = this.imageOf(t, q.dataset_id, rec);
    const expires = Math.ceil(nowMs / 1000) + IMAGE_URL_SECONDS;
    return {
      url: `${origin}/v1/object-images/download?${imageQuery(this.secret, { tenant: t, bucket, key, expires })}`,
      content_type: image.content_type,
      expires_at: new Date(expires * 1000).toISOString(),
    };
  }

  /** The image an image URL names, when the URL holds (403 otherwise) and the object is still an image (404 otherwise). */
  open(q: ObjectImageQuery): OpenedImage {
    const { tenant, bucket, key } = verifyImage(this.secret, q);
    const image = this.sniff(tenant, bucket, key);
    if (!image) throw new NotFound(`object '${key}' is not an image`);
    const path = this.blobs.path(tenant, bucket, key);
    return { body: createReadStream(path), content_type: image.content_type, size: statSync(path).size };
  }

  /** The record from (key, line), or undefined. */
  private record(t: string, d: string, key: string, line: number): StoredRecord | undefined {
    const matches = (rec: StoredRecord | undefined): rec is StoredRecord => rec !== undefined && rec.key === key && rec.line === line;
    // the runs that read the object name its versions (etags) and sources: a derived id each
    const tried = new Set<string>();
    const ordered = this.datasets.state(t, d).ordered_ids === true;
    for (const { value: run } of scanPrefix<RunState>(this.store.meta, keys.run(t))) {
      if (run.dataset_id !== d || run.key !== key) continue;
      const source = this.sourceById(t, run.source_id);
      if (!source) continue;
      const id = lineIds(source.source_key, run.etag, ordered)(line);
      if (tried.has(id)) continue;
      tried.add(id);
      const seq = this.store.ids.get([t, d, id]);
      const rec = seq === undefined ? undefined : this.store.records.get([t, d, seq]);
      if (matches(rec)) return rec;
    }
    // an id the input named: a bounded look among the newest records
    for (const { value } of scanPrefix<StoredRecord>(this.store.records, [t, d], { reverse: true, limit: IMAGE_SCAN_RECORDS })) {
      if (matches(value)) return value;
    }
    return undefined;
  }

  /** The image a record stands for, or 404 saying why there is none. */
  private imageOf(t: string, d: string, rec: StoredRecord): { bucket: string; key: string; image: ImageInfo } {
    const own = this.sniff(t, rec.bucket, rec.key);
    if (own) return { bucket: rec.bucket, key: rec.key, image: own };
    const field = this.imageField(t, d, rec.source_key);
    const named = field === undefined ? undefined : fieldValue(rec, field);
    if (typeof named === 'string' && named !== '') {
      for (const bucket of this.buckets(t, d, rec.source_key)) {
        const image = this.sniff(t, bucket, named);
        if (image) return { bucket, key: named, image };
      }
      throw new NotFound(`the record's ${field} '${named.slice(0, 200)}' is not an image object of this tenant`);
    }
    throw new NotFound(`the record's object '${rec.key}' is not an image${field ? ` and its ${field} names no object` : ''}`);
  }

  /** The first image_embeddings field of the record's source, else of another source of the dataset. */
  private imageField(t: string, d: string, sourceKey: string): string | undefined {
    const field = (s: Source) => s.semantic_config?.image_embeddings?.fields?.[0]?.field;
    const sources = this.sources.ofDataset(t, d);
    const own = sources.find((s) => s.source_key === sourceKey);
    return (own && field(own)) ?? sources.map(field).find((f) => f !== undefined);
  }

  /** The buckets an object key may live in: the record's source's first, then every other source's of the tenant. */
  private buckets(t: string, d: string, sourceKey: string): string[] {
    const all = this.sources.list(t);
    const first = all.filter((s) => s.source_key === sourceKey || s.dataset_id === d).map((s) => s.bucket);
    return [...new Set([...first, ...all.map((s) => s.bucket)])];
  }

  /** The object as an image; null when it is none, is missing, or its key names no object. */
  private sniff(t: string, bucket: string, key: string): ImageInfo | null {
    try {
      return sniffImage(this.blobs.path(t, bucket, key));
    } catch {
      return null;
    }
  }

  private sourceById(t: string, id: number): Source | undefined {
    try {
      return this.sources.get(t, id);
    } catch {
      return undefined;
    }
  }
}
