import type { IngestOptions } from '../../api/ingest.js';
import type { CompletedUpload, UploadSession } from '../../api/uploads.js';
import { SYSTEM, scanPrefix, type Key, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

export type SessionStatus = 'open' | 'completing' | 'completed' | 'aborted';

/** An upload session as stored at `[tenant, 'upload', session id]`. */
export interface SessionState {
  upload_session_id: string;
  tenant_id: string;
  source_id: number;
  bucket: string;
  key: string;
  filename: string;
  content_type: string | null;
  size_bytes: number | null;
  /** format and field overrides for the run that complete starts */
  options: IngestOptions;
  status: SessionStatus;
  created_at: string;
  expires_at: string;
  /** the answer to complete, kept so that a second complete gets it again */
  completed: CompletedUpload | null;
}

/** A stored part, at `[tenant, 'upload_part', session id, part number]`; `file` is its object key under UPLOADS_BUCKET. */
export interface PartState { etag: string; size: number; file: string }

/** Parts live beside the tenant's buckets, under blobs/<tenant>/.uploads/<session>/, a name no bucket takes. */
export const UPLOADS_BUCKET = '.uploads';

export const sessionKey = (tenantId: string, sessionId: string): Key => keys.upload(tenantId, sessionId);
export const partKey = (tenantId: string, sessionId: string, part: number): Key => [tenantId, 'upload_part', sessionId, part];
export const partsPrefix = (tenantId: string, sessionId: string): Key => [tenantId, 'upload_part', sessionId];

export const isExpired = (s: SessionState, nowMs = Date.now()) => Date.parse(s.expires_at) <= nowMs;

export function publicSession(s: SessionState, partBytes: number, partNumbers: number, objectBytes: number): UploadSession {
  return {
    upload_session_id: s.upload_session_id, bucket: s.bucket, key: s.key, expires_at: s.expires_at,
    part_size_max: partBytes, part_number_max: partNumbers, object_size_max: objectBytes,
  };
}

/** The stored parts of a session, by part number. */
export function partsOf(store: Store, tenantId: string, sessionId: string): Map<number, PartState> {
  const parts = new Map<number, PartState>();
  for (const { key, value } of scanPrefix<PartState>(store.meta, partsPrefix(tenantId, sessionId))) parts.set(key[3] as number, value);
  return parts;
}

/** Every tenant with a data dir entry: the sweep visits each. */
export function tenantIds(store: Store): string[] {
  return [...new Set([...scanPrefix<{ tenant_id: string }>(store.meta, keys.tenant(SYSTEM))].map((e) => e.value.tenant_id))];
}
