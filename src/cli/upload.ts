import type { IngestOptions, IngestRun } from '../api/ingest.js';
import type { CompletedUpload, PartStored, UploadPartList, UploadSession } from '../api/uploads.js';
import { Unavailable } from '../engine/errors.js';
import { responseError } from './responseError.js';

/** The remote service's JSON call: bearer token, tenant header, errors as engine errors. */
export type Call = <T>(method: 'GET' | 'POST', path: string, body?: unknown) => Promise<T>;

const MiB = 2 ** 20;
/** Parts in flight at once: enough to keep a link busy, while memory stays at (PARALLEL + 1) parts. */
const PARALLEL = 4;
const PUT_ATTEMPTS = 3;

/** 8 MiB parts unless SVC_UPLOAD_PART_BYTES says otherwise; more when the file needs it to fit the part count. */
function partSize(session: UploadSession, size: number): number {
  const wanted = Number(process.env.SVC_UPLOAD_PART_BYTES) > 0 ? Number(process.env.SVC_UPLOAD_PART_BYTES) : 8 * MiB;
  return Math.min(session.part_size_max, Math.max(wanted, Math.ceil(size / session.part_number_max)));
}

/** The input cut into parts of `size` bytes (the last may be shorter; an empty input is one empty part). */
async function* slices(input: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let bytes = 0;
  let any = false;
  for await (const chunk of input) {
    held.push(chunk);
    bytes += chunk.length;
    while (bytes >= size) {
      const all = Buffer.concat(held);
      yield all.subarray(0, size);
      any = true;
      held = bytes > size ? [all.subarray(size)] : [];
      bytes -= size;
    }
  }
  if (bytes > 0 || !any) yield Buffer.concat(held);
}

/**
 * Sends a file as a multipart upload: a session, then its parts PUT to their signed URLs a few at a
 * time (each retried on a network error or a 5xx), then complete; returns the run complete started.
 * The input is read in order, so whoever counts its bytes sees the upload's progress. On failure the
 * session is aborted, so that its parts do not wait for the sweep.
 */
export async function uploadFile(call: Call, sourcePath: string, input: AsyncIterable<Buffer>, opts: IngestOptions & { size?: number }): Promise<IngestRun> {
  const { size, filename, ...options } = opts;
  const session = await call<UploadSession>('POST', `${sourcePath}/uploads`, { ...options, filename: filename ?? 'upload', size_bytes: size });
  const { Agent, request } = await import('undici');
  const agent = new Agent({ keepAliveTimeout: 10_000, connectTimeout: 10_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const sent: { part_number: number; etag: string }[] = [];
  const inFlight = new Set<Promise<void>>();

  async function put(part_number: number, bytes: Buffer): Promise<void> {
    const { parts } = await call<UploadPartList>('POST', `${sourcePath}/uploads/parts`, { upload_session_id: session.upload_session_id, part_numbers: [part_number] });
    for (let attempt = 1; ; attempt++) {
      let status: number;
      let body: any;
      try {
        const res = await request(parts[0].upload_url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/octet-stream' }, dispatcher: agent });
        status = res.statusCode;
        const text = await res.body.text();
        body = text ? JSON.parse(text) : undefined;
      } catch (err) {
        if (attempt < PUT_ATTEMPTS) continue;
        throw new Unavailable(`cannot send part ${part_number}: ${(err as Error).message}`);
      }
      if (status === 200) return void sent.push({ part_number, etag: (body as PartStored).etag });
      if (status >= 500 && attempt < PUT_ATTEMPTS) continue;
      // read as any other response is, so that a 413 here exits as it does on a stream
      throw responseError(status, body, `part ${part_number}: `);
    }
  }

  try {
    let n = 0;
    for await (const bytes of slices(input, partSize(session, size ?? 0))) {
      const p = put(++n, bytes).finally(() => inFlight.delete(p));
      p.catch(() => {}); // seen through the race below or the final wait
      inFlight.add(p);
      if (inFlight.size >= PARALLEL) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    sent.sort((a, b) => a.part_number - b.part_number);
    const done = await call<CompletedUpload>('POST', `${sourcePath}/uploads/complete`, { upload_session_id: session.upload_session_id, parts: sent });
    return await call<IngestRun>('GET', `/v1/ingest/runs/${encodeURIComponent(done.ingest_run_id)}`);
  } catch (err) {
    await Promise.allSettled(inFlight);
    await call('POST', `${sourcePath}/uploads/abort`, { upload_session_id: session.upload_session_id }).catch(() => {});
    throw err;
  } finally {
    await agent.close();
  }
}
