/**
 * Temp files of objects being written: where they live, that a failed write leaves none, and that
 * the ones a killed process left are swept when a server opens the data dir — stale ones only.
 */
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobStore } from '../src/engine/blobs/store.js';
import { TEMP_FILE_MAX_AGE_MS } from '../src/engine/blobs/tempFiles.js';
import { Engine } from '../src/engine/index.js';
import { newId } from '../src/engine/ids.js';
import { init, serve, tempDir } from './helpers/cli.js';
import { until } from './helpers/http.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

function fresh(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir.path;
}

const tempFolder = (dataDir: string, tenant: string) => join(dataDir, 'blobs', tenant, '.tmp');
const tempFiles = (dataDir: string, tenant: string) => (existsSync(tempFolder(dataDir, tenant)) ? readdirSync(tempFolder(dataDir, tenant)) : []);

/** Sets a file's times `ageMs` in the past, as if its writer had stopped then. */
function age(path: string, ageMs: number): void {
  const then = new Date(Date.now() - ageMs);
  utimesSync(path, then, then);
}

describe('writing an object', () => {
  it("goes through a temp file in its tenant's .tmp folder, renamed into place", async () => {
    const dataDir = fresh();
    const blobs = new BlobStore(dataDir);
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    const input = (async function* () {
      yield Buffer.from('first half\n');
      await held;
      yield Buffer.from('second half\n');
    })();
    const writing = blobs.put('ten_a', 'hosted', 'logs/obj_1/x.log', input);
    await until('the temp file', () => (tempFiles(dataDir, 'ten_a').length === 1 ? true : undefined));
    expect(tempFiles(dataDir, 'ten_a')[0]).toMatch(/^tmp_[0-9a-z]{26}$/);
    expect(existsSync(join(dataDir, 'blobs/ten_a/hosted/logs/obj_1/x.log'))).toBe(false);
    release();
    await writing;
    expect(readFileSync(join(dataDir, 'blobs/ten_a/hosted/logs/obj_1/x.log'), 'utf8')).toBe('first half\nsecond half\n');
    expect(tempFiles(dataDir, 'ten_a')).toEqual([]);
  });

  it('leaves no temp file when it fails, and no bucket may be the temp folder', async () => {
    const dataDir = fresh();
    const blobs = new BlobStore(dataDir);
    await expect(blobs.put('ten_a', 'hosted', 'logs/obj_1/x.log', Readable.from([Buffer.alloc(100)]), 10)).rejects.toThrow(/exceeds 10 bytes/);
    expect(tempFiles(dataDir, 'ten_a')).toEqual([]);
    expect(() => blobs.path('ten_a', '.tmp', 'logs/x')).toThrow(/bucket/);
  });
});

describe('the temp file sweep', () => {
  it('runs when an engine opens for a server: stale temp files go, fresh ones and other files stay', async () => {
    const dataDir = join(fresh(), 'data');
    const first = await Engine.open(dataDir);
    let t: string;
    try {
      await first.init('acme', 'admin@acme.test');
      t = first.localCaller().tenant_id;
    } finally {
      await first.close();
    }

    await new BlobStore(dataDir).put(t, 'hosted', 'logs/obj_1/x.log', Readable.from([Buffer.from('kept object\n')]));
    const stale = join(tempFolder(dataDir, t), newId('tmp'));
    const fresher = join(tempFolder(dataDir, t), newId('tmp'));
    const other = join(tempFolder(dataDir, t), 'notes.txt');
    for (const path of [stale, fresher, other]) writeFileSync(path, 'half an object');
    age(stale, TEMP_FILE_MAX_AGE_MS + 60_000);
    age(other, 24 * 3600_000);
    age(fresher, TEMP_FILE_MAX_AGE_MS - 60_000); // an upload another process may still be writing

    const local = await Engine.open(dataDir); // a local command leaves upkeep to the server
    await local.close();
    expect(existsSync(stale)).toBe(true);

    const server = await Engine.open(dataDir, { background: true });
    try {
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresher)).toBe(true);
      expect(existsSync(other)).toBe(true);
      expect(readFileSync(join(dataDir, 'blobs', t, 'hosted/logs/obj_1/x.log'), 'utf8')).toBe('kept object\n');
    } finally {
      await server.close();
    }
  });

  it('removes what a server killed mid-stream left when the next server starts', async () => {
    const dataDir = fresh();
    const admin = init(dataDir);
    let server = await serve(dataDir);
    const headers = { authorization: `Bearer ${admin.token}`, 'x-service-tenant-id': admin.tenant_id, 'content-type': 'application/x-ndjson' };
    try {
      const created = await request(`${server.url}/v1/admin/datasets`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ dataset_id: 'logs' }) });
      expect(created.statusCode).toBe(201);
      await created.body.dump();
      // a stream that sends a few lines and then never ends
      const body = Readable.from(
        (async function* () {
          yield Buffer.from('{"msg":"one"}\n{"msg":"two"}\n');
          await new Promise(() => {});
        })(),
      );
      const stream = request(`${server.url}/v1/ingest/sources/logs/stream`, { method: 'POST', headers, body }).catch(() => null);
      await until('the temp file of the stream', () => (tempFiles(dataDir, admin.tenant_id).length === 1 ? true : undefined));
      const exited = new Promise((ok) => server.proc.once('exit', ok));
      server.proc.kill('SIGKILL');
      await exited;
      await stream;
      const [left] = tempFiles(dataDir, admin.tenant_id);
      expect(left).toMatch(/^tmp_/);

      // as if the restart came later than the sweep's age (a fresh one staying is shown above)
      age(join(tempFolder(dataDir, admin.tenant_id), left), TEMP_FILE_MAX_AGE_MS + 1000);
      server = await serve(dataDir);
      expect(tempFiles(dataDir, admin.tenant_id)).toEqual([]);
      const res = await request(`${server.url}/v1/ingest/sources/logs/stream`, { method: 'POST', headers, body: '{"msg":"after"}\n' });
      expect(res.statusCode).toBe(202);
      await res.body.dump();
    } finally {
      await server.stop();
    }
  });
});
