import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { cleanFilename } from '../blobs/objectKey.js';
import { TRANSFORM_VERSION, type NewRecord } from '../records.js';
import type { RunState } from './runs.js';
import { lineIds } from './transform.js';
import type { Batch } from './writer.js';

/** What an image object is, read from its first bytes: its type, its size in pixels, its size on disk. */
export interface ImageInfo {
  content_type: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  width: number;
  height: number;
  bytes: number;
}

/** The most of an object read to tell whether it is an image and how large: a JPEG's frame header may sit behind big EXIF/ICC segments. */
export const IMAGE_HEAD_BYTES = 64 * 1024;

type Found = Omit<ImageInfo, 'bytes'>;

/**
 * The image type and dimensions `head` (an object's first bytes) shows, decided by magic bytes
 * alone (never a file name): PNG (IHDR), GIF (logical screen), JPEG (the first SOFn marker), WebP
 * (VP8, VP8L or VP8X). Null when the bytes are none of these, or their header is cut short.
 */
export function imageType(head: Buffer): Found | null {
  return png(head) ?? gif(head) ?? jpeg(head) ?? webp(head);
}

/**
 * The object at `path` as an image (at most IMAGE_HEAD_BYTES of it read), or null when it is not
 * one. Errors opening or reading it are thrown.
 */
export function sniffImage(path: string): ImageInfo | null {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const head = Buffer.alloc(Math.min(size, IMAGE_HEAD_BYTES));
    let read = 0;
    while (read < head.length) {
      const n = readSync(fd, head, read, head.length - read, read);
      if (n === 0) break;
      read += n;
    }
    const found = imageType(head.subarray(0, read));
    return found ? { ...found, bytes: size } : null;
  } finally {
    closeSync(fd);
  }
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function png(b: Buffer): Found | null {
  // signature, then the IHDR chunk: length (13), type, width, height (big-endian)
  if (b.length < 24 || !b.subarray(0, 8).equals(PNG_MAGIC) || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return sized('image/png', b.readUInt32BE(16), b.readUInt32BE(20));
}

function gif(b: Buffer): Found | null {
  const sig = b.toString('latin1', 0, 6);
  if (b.length < 10 || (sig !== 'GIF87a' && sig !== 'GIF89a')) return null;
  return sized('image/gif', b.readUInt16LE(6), b.readUInt16LE(8));
}

/** SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC), which share the range and are no frame. */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function jpeg(b: Buffer): Found | null {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8 || b[2] !== 0xff) return null;
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    // markers without a length: TEM, RSTn
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan data before any frame header
    const length = b.readUInt16BE(i + 2);
    if (length < 2) return null;
    if (isSof(marker)) {
      // length, precision (1), height (2), width (2)
      if (i + 9 > b.length) return null;
      return sized('image/jpeg', b.readUInt16BE(i + 7), b.readUInt16BE(i + 5));
    }
    i += 2 + length;
  }
  return null;
}

function webp(b: Buffer): Found | null {
  if (b.length < 30 || b.toString('latin1', 0, 4) !== 'RIFF' || b.toString('latin1', 8, 12) !== 'WEBP') return null;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // frame tag (3), start code 9d 01 2a, then 14-bit width and height
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return sized('image/webp', b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  }
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return null;
    const bits = b.readUInt32LE(21);
    return sized('image/webp', (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === 'VP8X') {
    // flags (1), reserved (3), canvas width - 1 (24 bits), canvas height - 1 (24 bits)
    return sized('image/webp', b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
  }
  return null;
}

function sized(content_type: Found['content_type'], width: number, height: number): Found | null {
  return width > 0 && height > 0 ? { content_type, width, height } : null;
}

/**
 * The one batch an image object makes: a record on line 1 (its id derived as a text line's is, so
 * that the object and line find it again), its body the file name the ingest named (else "image"),
 * its metadata what the header told. Nothing when the run is past line 1 already.
 */
export async function* imageBatches(image: ImageInfo, run: RunState, sourceKey: string, orderedIds: boolean): AsyncGenerator<Batch> {
  if (run.resume_line >= 1) return;
  const name = run.requested?.filename ? cleanFilename(run.requested.filename) : undefined;
  const record: NewRecord = {
    id: lineIds(sourceKey, run.etag, orderedIds)(1), title: null, body: name ?? 'image', time: null,
    metadata: { content_type: image.content_type, width: image.width, height: image.height, bytes: image.bytes },
    source_key: sourceKey, bucket: run.bucket, etag: run.etag, line: 1, transform_version: TRANSFORM_VERSION,
  };
  yield { records: [record], errors: [], lastLine: 1 };
}
