import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PartRef } from '../../api/uploads.js';
import { Forbidden } from '../errors.js';

/** What a part URL names: a part of a tenant's session, until a time. */
export interface SignedPart { tenant: string; session: string; part: number; expires: number }

// The purpose comes first so that no other signature made with the data dir's secret can pass for this one.
const message = (p: { tenant: string; session: string; part: string; expires: string }) => ['upload-part', p.tenant, p.session, p.part, p.expires].join('\n');

const hmac = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest();

export function partQuery(secret: Buffer, p: SignedPart): string {
  const sig = hmac(secret, message({ tenant: p.tenant, session: p.session, part: String(p.part), expires: String(p.expires) })).toString('hex');
  return new URLSearchParams({ tenant: p.tenant, expires: String(p.expires), sig }).toString();
}

/**
 * The part a URL names, when its signature holds (compared in constant time) and it has not expired;
 * 403 otherwise. The signature covers the strings as sent, so any altered member fails it.
 */
export function verifyPart(secret: Buffer, ref: PartRef, nowMs = Date.now()): SignedPart {
  const { tenant, expires, sig } = ref;
  if (!tenant || !expires || !sig || !/^[0-9a-f]{64}$/.test(sig)) throw new Forbidden('the upload URL is not signed');
  const expected = hmac(secret, message({ tenant, session: ref.upload_session_id, part: ref.part_number, expires }));
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) throw new Forbidden('the upload URL signature does not match');
  if (Number(expires) * 1000 <= nowMs) throw new Forbidden('the upload URL has expired');
  return { tenant, session: ref.upload_session_id, part: Number(ref.part_number), expires: Number(expires) };
}
