// A file sent through the multipart upload API: a session, signed part URLs, each part PUT with
// XMLHttpRequest (for its progress), then complete, which starts the ingest run.
import type { CompletedUpload, UploadPartList, UploadSession } from '../api/uploads';
import { enc, post } from './api';

const PART_BYTES = 8 * 1024 * 1024;

function putPart(url: string, blob: Blob, onProgress: (sent: number) => void): Promise<string> {
  return new Promise((ok, fail) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        const etag = (JSON.parse(xhr.responseText) as { etag?: string }).etag ?? xhr.getResponseHeader('etag')?.replace(/"/g, '');
        if (etag) ok(etag);
        else fail(new Error('the part was stored without an etag'));
      } else fail(new Error(`part upload failed: HTTP ${xhr.status} ${xhr.responseText.slice(0, 300)}`));
    };
    xhr.onerror = () => fail(new Error('part upload failed: the server could not be reached'));
    xhr.send(blob);
  });
}

export async function uploadFile(sourceKey: string, file: File, format: string | undefined, onProgress: (fraction: number) => void): Promise<CompletedUpload> {
  const base = `/v1/ingest/sources/${enc(sourceKey)}/uploads`;
  const session = await post<UploadSession>(base, { filename: file.name, size_bytes: file.size, ...(format ? { format } : {}) });
  const size = Math.min(PART_BYTES, session.part_size_max);
  const count = Math.max(1, Math.ceil(file.size / size));
  const numbers = Array.from({ length: count }, (_, i) => i + 1);
  const { parts } = await post<UploadPartList>(`${base}/parts`, { upload_session_id: session.upload_session_id, part_numbers: numbers });
  const sent = new Array<number>(count).fill(0);
  const done: { etag: string; part_number: number }[] = [];
  try {
    for (const part of parts) {
      const i = part.part_number - 1;
      const blob = file.slice(i * size, Math.min(file.size, (i + 1) * size));
      const etag = await putPart(part.upload_url, blob, (n) => {
        sent[i] = n;
        onProgress(sent.reduce((a, b) => a + b, 0) / Math.max(1, file.size));
      });
      sent[i] = blob.size;
      done.push({ etag, part_number: part.part_number });
    }
  } catch (e) {
    await post(`${base}/abort`, { upload_session_id: session.upload_session_id }).catch(() => {});
    throw e;
  }
  onProgress(1);
  return post<CompletedUpload>(`${base}/complete`, { upload_session_id: session.upload_session_id, parts: done });
}
