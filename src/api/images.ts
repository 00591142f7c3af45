import { Type, type Static } from '@sinclair/typebox';
import { DateTime } from './common.js';
import { LIMITS } from './limits.js';

/** The record whose image is asked for: by provenance (the object key and line it came from) in one dataset. */
export const ObjectImageUrlQuery = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 2048, description: 'object key the record was ingested from' }),
  line: Type.Integer({ minimum: 1, description: '1-based line of that object the record starts on (an image object is line 1)' }),
  dataset_id: Type.String({ minLength: 1, maxLength: 255 }),
});
export type ObjectImageUrlQuery = Static<typeof ObjectImageUrlQuery>;

export const ObjectImageUrl = Type.Object({
  url: Type.String({ description: 'serves the image, signed for the tenant; needs no token' }),
  content_type: Type.String(),
  expires_at: DateTime,
});
export type ObjectImageUrl = Static<typeof ObjectImageUrl>;

/**
 * What an image URL carries: whose object, which, until when, and the signature. Left loose on
 * purpose: anything missing or altered fails the signature (403), not validation.
 */
export const ObjectImageQuery = Type.Object({
  tenant: Type.Optional(Type.String({ maxLength: LIMITS.id })),
  bucket: Type.Optional(Type.String({ maxLength: LIMITS.id })),
  key: Type.Optional(Type.String({ maxLength: 4096 })),
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  sig: Type.Optional(Type.String({ maxLength: 128 })),
});
export type ObjectImageQuery = Static<typeof ObjectImageQuery>;
