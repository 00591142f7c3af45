import { PART_NUMBER_MAX } from '../../api/limits.js';
import { MAX_OBJECT_BYTES } from '../ingest/objectLimit.js';

/**
 * Bounds of hosted multipart uploads, and how each is enforced:
 * - a part holds at most `partBytes` (64 MiB): a PUT beyond it gets 413, counted while it streams;
 * - part numbers run 1 to 10000: outside that, 422;
 * - an object holds at most 10 GiB: 422 at session creation when `size_bytes` says more, 413 at
 *   complete when the parts add up to more;
 * - a session lives `sessionSeconds` (24 h); after that it is refused (409) and swept, parts and all,
 *   by a job that runs every `sweepSeconds` (10 min) while sessions exist;
 * - a part URL lives `expires_in` seconds (default 1 h, at most 24 h), never past its session.
 * SVC_UPLOAD_PART_MAX_BYTES, SVC_UPLOAD_SESSION_SECONDS and SVC_UPLOAD_SWEEP_SECONDS, read once by
 * config.ts, lower or raise the first and the last two (tests use them to stay small and fast).
 */
export interface UploadLimits {
  partBytes: number;
  partNumbers: number;
  objectBytes: number;
  sessionSeconds: number;
  sweepSeconds: number;
  urlSeconds: number;
}

/** The bounds, with the part size, session lifetime and sweep period an operator set. */
export function uploadLimits(set: Pick<UploadLimits, 'partBytes' | 'sessionSeconds' | 'sweepSeconds'>): UploadLimits {
  return { ...set, partNumbers: PART_NUMBER_MAX, objectBytes: MAX_OBJECT_BYTES, urlSeconds: 3600 };
}
