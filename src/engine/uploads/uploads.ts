import { readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { CompletedUpload, PartRef, PartStored, UploadComplete, UploadCreate, UploadPartList, UploadPartsRequest, UploadSession, UploadAborted } from '../../api/uploads.js';
import type { Caller } from '../auth/caller.js';
import { cleanFilename, newObjectKey } from '../blobs/objectKey.js';
import type { BlobStore } from '../blobs/store.js';
import type { FreeSpace } from '../diskSpace.js';
import { Conflict, Invalid, NotFound, Refused } from '../errors.js';
import type { Ingest } from '../ingest/ingest.js';
import { sniffImage } from '../ingest/image.js';
import { newId } from '../ids.js';
import type { JobQueue } from '../jobs/queue.js';
import type { Source } from '../../api/sources.js';
import { SYSTEM, removePrefix, scanPrefix, type Store } from '../store/db.js';
import { checkParts } from './check.js';
import type { UploadLimits } from './limits.js';
import { concatenated, partTooLarge, writePart } from './parts.js';
import { partQuery, verifyPart } from './signing.js';
import { isExpired, partKey, partsOf, partsPrefix, publicSession, sessionKey, tenantIds, UPLOADS_BUCKET, type PartState, type SessionState } from './state.js';
import { keys } from '../store/keys.js';

const SWEEP_JOB = 'upload_sweep';

/**
 * Hosted multipart uploads. A session (LMDB, `[tenant, 'upload', id]`) names the object to be;
 * its parts arrive by PUT on URLs signed with the data dir's secret and land as files under
 * blobs/<tenant>/.uploads/<session>/ (one file per PUT, so that a part sent again never changes
 * under a complete that is reading it); complete streams them, in order, into the object (its etag
 * is the md5 of the whole, as for a streamed object, so the same bytes give the same record ids)
 * and queues its ingest run. The answer to complete is kept on the session: a repeated complete
 * gets it again and starts nothing. Abort drops the parts; an aborted or completed session refuses
 * everything after (409). Expired sessions are swept with their parts. See limits.ts for the bounds.
 */
export class Uploads {
  /** true once this process knows a sweep is waiting, so that creating a session need not look */
  private sweepWaiting = false;
  /** completes under way in this process, so that a complete sent twice at once waits for the first */
  private readonly completing = new Map<string, Promise<CompletedUpload>>();

  constructor(
    private readonly store: Store,
    private readonly blobs: BlobStore,
    private readonly secret: Buffer,
    private readonly ingest: Ingest,
    private readonly jobs: JobQueue,
    private readonly space: FreeSpace,
    readonly limits: UploadLimits,
  ) {
    jobs.register(SWEEP_JOB, { handler: () => this.sweep(), maxAttempts: 3, background: true, freesSpace: true });
  }

  async create(caller: Caller, sourceKey: string, req: UploadCreate): Promise<UploadSession> {
    const source = this.ingest.source(caller.tenant_id, { source_key: sourceKey });
    const { filename, content_type, size_bytes, ...options } = req;
    if (size_bytes !== undefined && size_bytes > this.limits.objectBytes) {
      throw new Invalid(`an upload holds at most ${this.limits.objectBytes} bytes`, [{ loc: ['body', 'size_bytes'], msg: `at most ${this.limits.objectBytes} bytes`, type: 'less_than_equal', input: size_bytes }]);
    }
    const id = newId('upl');
    const at = Date.now();
    const session: SessionState = {
      upload_session_id: id, tenant_id: caller.tenant_id, source_id: source.source_id, bucket: source.bucket,
      key: newObjectKey(source.source_key, filename, 'upload'), filename: cleanFilename(filename) ?? 'upload',
      content_type: content_type ?? null, size_bytes: size_bytes ?? null, options, status: 'open',
      created_at: new Date(at).toISOString(), expires_at: new Date(at + this.limits.sessionSeconds * 1000).toISOString(), completed: null,
    };
    await this.store.meta.put(sessionKey(caller.tenant_id, id), session);
    await this.arm(at + this.limits.sweepSeconds * 1000);
    return this.describe(session);
  }

  /** Signed URLs for the parts named, each valid `expires_in` seconds and never past the session. */
  partUrls(caller: Caller, sourceKey: string, req: UploadPartsRequest, origin: string): UploadPartList {
    const s = this.usable(this.lookup(caller, sourceKey, req.upload_session_id).session);
    const expires = Math.min(Math.ceil(Date.now() / 1000) + (req.expires_in ?? this.limits.urlSeconds), Math.floor(Date.parse(s.expires_at) / 1000));
    const expires_at = new Date(expires * 1000).toISOString();
    return {
      parts: req.part_numbers.map((part) => ({
        part_number: part,
        upload_url: `${origin}/v1/uploads/${s.upload_session_id}/parts/${part}?${partQuery(this.secret, { tenant: s.tenant_id, session: s.upload_session_id, part, expires })}`,
        expires_at,
      })),
    };
  }

  /** Stores the bytes of a part under a signed URL; a part sent again replaces the earlier one. */
  async putPart(ref: PartRef, input: Readable, declaredBytes?: number): Promise<PartStored> {
    const { tenant, session: id, part } = verifyPart(this.secret, ref);
    this.usable(this.state(tenant, id));
    if (declaredBytes !== undefined && declaredBytes > this.limits.partBytes) throw partTooLarge(this.limits.partBytes);
    this.space.check('an upload part');
    const file = `${id}/${part}.${newId('p')}`;
    let blob;
    try {
      blob = await writePart(this.blobs, tenant, file, input, this.limits.partBytes);
    } catch (err) {
      this.usable(this.state(tenant, id)); // an abort or a sweep meanwhile removed the directory: say that rather than ENOENT
      throw err;
    }
    // the part counts only if the session is still open once its bytes are in
    const kept = await this.store.meta.transaction(() => {
      const current: SessionState | undefined = this.store.meta.get(sessionKey(tenant, id));
      if (current?.status !== 'open') return { current };
      const previous: PartState | undefined = this.store.meta.get(partKey(tenant, id, part));
      this.store.meta.put(partKey(tenant, id, part), { etag: blob.etag, size: blob.size, file } satisfies PartState);
      return { current, previous };
    });
    if (kept.current?.status !== 'open') {
      this.blobs.remove(tenant, UPLOADS_BUCKET, file);
      this.usable(kept.current ?? this.state(tenant, id));
    }
    if (kept.previous) this.blobs.remove(tenant, UPLOADS_BUCKET, kept.previous.file);
    return { etag: blob.etag, part_number: part, size_bytes: blob.size };
  }

  complete(caller: Caller, sourceKey: string, req: UploadComplete): Promise<CompletedUpload> {
    const { source, session: s } = this.lookup(caller, sourceKey, req.upload_session_id);
    const flight = `${caller.tenant_id}/${s.upload_session_id}`;
    const inFlight = this.completing.get(flight);
    if (inFlight) return inFlight;
    if (s.status === 'completed') return Promise.resolve(s.completed!);
    // 'completing' with nothing in flight was left by a process that stopped half-way: start again
    if (s.status !== 'completing') this.usable(s);
    else if (isExpired(s)) throw new Conflict(`upload session '${s.upload_session_id}' has expired`);
    this.space.check('completing an upload'); // the object is a copy of its parts: it needs their size again
    const done = this.assemble(caller, source, s, req.parts).finally(() => this.completing.delete(flight));
    this.completing.set(flight, done);
    return done;
  }

  async abort(caller: Caller, sourceKey: string, sessionId: string): Promise<UploadAborted> {
    const { session: s } = this.lookup(caller, sourceKey, sessionId);
    const t = s.tenant_id;
    // a session left 'completing' by a process that stopped can still be aborted; one being completed here cannot
    const settled = (status: SessionState['status']) => status === 'completed' || (status === 'completing' && this.completing.has(`${t}/${sessionId}`));
    const aborted = await this.store.meta.transaction(() => {
      const current: SessionState | undefined = this.store.meta.get(sessionKey(t, sessionId));
      if (!current || settled(current.status)) return false;
      this.store.meta.put(sessionKey(t, sessionId), { ...current, status: 'aborted' } satisfies SessionState);
      removePrefix(this.store.meta, partsPrefix(t, sessionId));
      return true;
    });
    if (!aborted) throw new Conflict(`upload session '${sessionId}' is ${this.state(t, sessionId).status}: it cannot be aborted`);
    this.removeParts(t, sessionId);
    return { upload_session_id: sessionId, status: 'aborted' };
  }

  /** Removes expired sessions with their parts, and part directories no session owns; runs as a job. */
  async sweep(nowMs = Date.now()): Promise<{ removed: number; remaining: number }> {
    this.sweepWaiting = false;
    let removed = 0;
    let remaining = 0;
    for (const t of tenantIds(this.store)) {
      for (const { value: s } of scanPrefix<SessionState>(this.store.meta, keys.upload(t))) {
        if (!isExpired(s, nowMs) || this.completing.has(`${t}/${s.upload_session_id}`)) {
          remaining++;
          continue;
        }
        await this.store.meta.transaction(() => {
          this.store.meta.remove(sessionKey(t, s.upload_session_id));
          removePrefix(this.store.meta, partsPrefix(t, s.upload_session_id));
        });
        this.removeParts(t, s.upload_session_id);
        removed++;
      }
      // a directory whose session is gone (a process stopped between the two removals)
      for (const dir of this.partDirs(t)) if (!this.store.meta.get(sessionKey(t, dir))) this.removeParts(t, dir);
    }
    if (remaining > 0) await this.arm(nowMs + this.limits.sweepSeconds * 1000);
    return { removed, remaining };
  }

  private async assemble(caller: Caller, source: Source, s: SessionState, listed: UploadComplete['parts']): Promise<CompletedUpload> {
    const { tenant_id: t, upload_session_id: id } = s;
    const parts = checkParts(listed, partsOf(this.store, t, id));
    const size = parts.reduce((n, p) => n + p.size, 0);
    if (size > this.limits.objectBytes) throw new Refused(`the parts add up to ${size} bytes; an upload holds at most ${this.limits.objectBytes}`, 'object_too_large', 413);
    if (s.size_bytes !== null && size !== s.size_bytes) {
      throw new Invalid(`the parts add up to ${size} bytes, not the ${s.size_bytes} the session announced`, [{ loc: ['body', 'parts'], msg: `the parts add up to ${size} bytes, not ${s.size_bytes}`, type: 'size_mismatch' }]);
    }
    await this.transition(s, 'completing');
    let blob, run, image;
    try {
      const paths = parts.map((p) => this.blobs.path(t, UPLOADS_BUCKET, p.file));
      blob = await this.blobs.put(t, source.bucket, s.key, concatenated(paths), this.limits.objectBytes, () => this.space.check('completing an upload'));
      image = sniffImage(this.blobs.path(t, source.bucket, s.key)); // by its bytes, as its run will tell
      run = await this.ingest.startFromObject(caller, source, { key: s.key, etag: blob.etag, input_kind: 'hosted_upload', upload_session_id: id }, { ...s.options, filename: s.filename });
    } catch (err) {
      await this.transition(s, 'open'); // the parts are all still there: complete may be tried again, or the session aborted
      throw err;
    }
    const completed: CompletedUpload = {
      bucket: source.bucket, dataset_id: source.dataset_id, etag: blob.etag, image_reference: image ? s.key : null, key: s.key, source: source.source_key,
      source_id: source.source_id, tenant_id: t, ingest_run_id: run.ingest_run_id, upload_session_id: id, size_bytes: blob.size,
    };
    await this.store.meta.transaction(() => {
      this.store.meta.put(sessionKey(t, id), { ...this.state(t, id), status: 'completed', completed } satisfies SessionState);
      removePrefix(this.store.meta, partsPrefix(t, id));
    });
    this.removeParts(t, id);
    return completed;
  }

  /** Moves an open (or half-completed) session to `status`; 409 when an abort got there first. */
  private async transition(s: SessionState, status: 'open' | 'completing'): Promise<void> {
    const ok = await this.store.meta.transaction(() => {
      const current: SessionState | undefined = this.store.meta.get(sessionKey(s.tenant_id, s.upload_session_id));
      if (!current || (current.status !== 'open' && current.status !== 'completing')) return false;
      this.store.meta.put(sessionKey(s.tenant_id, s.upload_session_id), { ...current, status });
      return true;
    });
    if (!ok) this.usable(this.state(s.tenant_id, s.upload_session_id));
  }

  /** The session a route names, which must belong to the route's source (404 otherwise). */
  private lookup(caller: Caller, sourceKey: string, sessionId: string): { source: Source; session: SessionState } {
    const source = this.ingest.source(caller.tenant_id, { source_key: sourceKey });
    const session = this.store.meta.get(sessionKey(caller.tenant_id, sessionId)) as SessionState | undefined;
    if (!session || session.source_id !== source.source_id) throw new NotFound(`upload session '${sessionId}' not found`);
    return { source, session };
  }

  private state(tenantId: string, sessionId: string): SessionState {
    const s = this.store.meta.get(sessionKey(tenantId, sessionId));
    if (!s) throw new NotFound(`upload session '${sessionId}' not found`);
    return s;
  }

  /** The session, when parts may still be added to it; 409 once aborted, completed or expired. */
  private usable(s: SessionState): SessionState {
    const id = s.upload_session_id;
    if (s.status === 'aborted') throw new Conflict(`upload session '${id}' was aborted`);
    if (s.status === 'completed') throw new Conflict(`upload session '${id}' is already completed`);
    if (s.status === 'completing') throw new Conflict(`upload session '${id}' is being completed`);
    if (isExpired(s)) throw new Conflict(`upload session '${id}' has expired`);
    return s;
  }

  private describe(s: SessionState): UploadSession {
    return publicSession(s, this.limits.partBytes, this.limits.partNumbers, this.limits.objectBytes);
  }

  private partsRoot(tenantId: string): string {
    return dirname(this.blobs.path(tenantId, UPLOADS_BUCKET, 'x'));
  }

  private partDirs(tenantId: string): string[] {
    try {
      return readdirSync(this.partsRoot(tenantId));
    } catch {
      return [];
    }
  }

  private removeParts(tenantId: string, sessionId: string): void {
    rmSync(this.blobs.path(tenantId, UPLOADS_BUCKET, sessionId), { recursive: true, force: true });
  }

  /** Makes sure one sweep is waiting (the sweep re-arms itself while sessions remain). */
  private async arm(dueMs: number): Promise<void> {
    if (this.sweepWaiting) return;
    if (this.jobs.list(SYSTEM, { type: SWEEP_JOB, status: 'pending', limit: 1 }).length === 0) await this.jobs.enqueue(SYSTEM, SWEEP_JOB, {}, dueMs);
    this.sweepWaiting = true;
  }
}
