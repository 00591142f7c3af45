import { createHmac, timingSafeEqual } from 'node:crypto';
import type { DownloadQuery } from '../../api/exports.js';
import { Forbidden } from '../errors.js';

/** What a download URL names: an export of a tenant, until a time (epoch seconds). */
export interface SignedDownload { tenant: string; export_id: string; expires: number }

// The purpose comes first so that no other signature made with the data dir's secret (an upload part's) can pass for this one.
const message = (p: { tenant: string; export_id: string; expires: string }) => ['export-download', p.tenant, p.export_id, p.expires].join('\n');

const hmac = (secret: Buffer, text: string) => createHmac('sha256', secret).update(text).digest();

/** The query string of a download URL. */
export function downloadQuery(secret: Buffer, d: SignedDownload): string {
  const sig = hmac(secret, message({ tenant: d.tenant, export_id: d.export_id, expires: String(d.expires) })).toString('hex');
  return new URLSearchParams({ tenant: d.tenant, expires: String(d.expires), sig }).toString();
}

/**
 * The export a URL names, when its signature holds (compared in constant time) and it has not
 * expired; 403 otherwise. The signature covers the strings as sent, so any altered member fails it.
 */
export function verifyDownload(secret: Buffer, exportId: string, q: DownloadQuery, nowMs = Date.now()): SignedDownload {
  const { tenant, expires, sig } = q;
  if (!tenant || !expires || !sig || !/^[0-9a-f]{64}$/.test(sig)) throw new Forbidden('the download URL is not signed');
  const expected = hmac(secret, message({ tenant, export_id: exportId, expires }));
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) throw new Forbidden('the download URL signature does not match');
  if (Number(expires) * 1000 <= nowMs) throw new Forbidden('the download URL has expired');
  return { tenant, export_id: exportId, expires: Number(expires) };
}
