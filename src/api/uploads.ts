import { Type, type Static } from '@sinclair/typebox';
import { DateTime, FieldPath, Id, Literals, Nullable } from './common.js';
import { IngestFormat } from './ingest.js';
import { LIMITS, PART_NUMBER_MAX } from './limits.js';
import { SourceKeyPath } from './sources.js';

const SessionId = Id;
/** Part numbers are 1 to 10000, as in the S3 multipart API the clients already know. */
export { PART_NUMBER_MAX };
const PartNumber = Type.Integer({ minimum: 1, maximum: PART_NUMBER_MAX });

export const UploadSourcePath = SourceKeyPath;

/** The contract's members, plus the per-run overrides the stream endpoint takes as query parameters. */
export const UploadCreate = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: LIMITS.filename }),
  content_type: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.name })),
  size_bytes: Type.Optional(Type.Integer({ minimum: 0, description: 'announced object size: refused at once above the object limit, checked at complete' })),
  format: Type.Optional(IngestFormat),
  id_field: Type.Optional(FieldPath),
  title_field: Type.Optional(FieldPath),
  body_field: Type.Optional(FieldPath),
  time_field: Type.Optional(FieldPath),
});
export type UploadCreate = Static<typeof UploadCreate>;

export const UploadSession = Type.Object({
  upload_session_id: Type.String(),
  bucket: Type.String(),
  key: Type.String(),
  expires_at: DateTime,
  part_size_max: Type.Integer({ description: 'largest part a PUT accepts, in bytes' }),
  /** Additions: the other two limits a client sizes its parts by. */
  part_number_max: Type.Integer(),
  object_size_max: Type.Integer(),
});
export type UploadSession = Static<typeof UploadSession>;

export const UploadPartsRequest = Type.Object({
  upload_session_id: SessionId,
  part_numbers: Type.Array(PartNumber, { minItems: 1, maxItems: PART_NUMBER_MAX }),
  /** Addition: lifetime of the URLs in seconds (default 3600), never past the session's expiry. */
  expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
});
export type UploadPartsRequest = Static<typeof UploadPartsRequest>;

export const UploadPart = Type.Object({ part_number: Type.Integer(), upload_url: Type.String(), expires_at: DateTime });
export const UploadPartList = Type.Object({ parts: Type.Array(UploadPart) });
export type UploadPartList = Static<typeof UploadPartList>;

export const UploadComplete = Type.Object({
  upload_session_id: SessionId,
  parts: Type.Array(Type.Object({ etag: Type.String({ minLength: 1, maxLength: LIMITS.id }), part_number: PartNumber }), { minItems: 1, maxItems: PART_NUMBER_MAX }),
});
export type UploadComplete = Static<typeof UploadComplete>;

export const CompletedUpload = Type.Object({
  bucket: Type.String(),
  dataset_id: Type.String(),
  etag: Type.String({ description: 'md5 hex of the whole object, as for a streamed object' }),
  image_reference: Nullable(Type.String({ description: 'the object key when the object is an image (PNG, JPEG, GIF or WebP, told by its bytes): it is ingested as one record, and GET /v1/object-image-url serves it; null otherwise' })),
  key: Type.String(),
  source: Type.String({ description: 'source key' }),
  source_id: Type.Integer(),
  tenant_id: Type.String(),
  /** Additions: the run that ingests the object, and what was assembled. */
  ingest_run_id: Type.String(),
  upload_session_id: Type.String(),
  size_bytes: Type.Integer(),
});
export type CompletedUpload = Static<typeof CompletedUpload>;

export const UploadAbort = Type.Object({ upload_session_id: SessionId });
export type UploadAbort = Static<typeof UploadAbort>;

export const UploadAborted = Type.Object({ upload_session_id: Type.String(), status: Literals(['aborted'] as const) });
export type UploadAborted = Static<typeof UploadAborted>;

/**
 * Left loose on purpose: any part of a URL that is missing or altered fails its signature (403), not
 * validation. Only lengths are capped, far above what the server signs.
 */
const Loose = Type.String({ maxLength: LIMITS.id });
export const PartPath = Type.Object({ upload_session_id: Loose, part_number: Loose });
export const PartQuery = Type.Object({ tenant: Type.Optional(Loose), expires: Type.Optional(Loose), sig: Type.Optional(Loose) });
export type PartRef = Static<typeof PartPath> & Static<typeof PartQuery>;

export const PartStored = Type.Object({ etag: Type.String({ description: 'md5 hex of the part; also the quoted ETag header' }), part_number: Type.Integer(), size_bytes: Type.Integer() });
export type PartStored = Static<typeof PartStored>;
