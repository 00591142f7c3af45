import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ObjectImageQuery } from '../../api/images.js';
import { Forbidden } from '../errors.js';

/** What an image URL names: an object of a tenant (bucket and key), until a time (epoch seconds). */
export interface SignedImage { tenant: string; bucket: string; key: string; expires: number }

// The purpose comes first so that no other signature made with the data dir's secret (an export
// download's, an upload part's) can pass for this one; members are joined by a newline, which no
// tenant id, bucket or number holds, and the key comes last so that its own newlines shift nothing.
const message = (p: { tenant: string; bucket: string; key: string; expires: string }) => ['object-image', p.tenant, p.bucket, p.expires, p.key].join('\n');

const hmac = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest();

/** The query string of an image URL. */
export function imageQuery(secret: Buffer, d: SignedImage): string {
  const expires = String(d.expires);
  const sig = hmac(secret, message({ tenant: d.tenant, bucket: d.bucket, key: d.key, expires })).toString('hex');
  return new URLSearchParams({ tenant: d.tenant, bucket: d.bucket, key: d.key, expires, sig }).toString();
}

/**
 * The object an image URL names, when its signature holds (compared in constant time) and it has
 * not expired; 403 otherwise. The signature covers the strings as sent, so any altered member fails it.
 */
export function verifyImage(secret: Buffer, q: ObjectImageQuery, nowMs = Date.now()): SignedImage {
  const { tenant, bucket, key, expires, sig } = q;
  if (!tenant || !bucket || !key || !expires || !sig || !/^[0-9a-f]{64}$/.test(sig)) throw new Forbidden('the image URL is not signed');
  const expected = hmac(secret, message({ tenant, bucket, key, expires }));
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) throw new Forbidden('the image URL signature does not match');
  if (!/^\d+$/.test(expires) || Number(expires) * 1000 <= nowMs) throw new Forbidden('the image URL has expired');
  return { tenant, bucket, key, expires: Number(expires) };
}
