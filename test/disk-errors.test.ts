import { statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { configFromEnv } from '../src/engine/config.js';
import { asDiskFull, diskWrite, isDiskError } from '../src/engine/diskErrors.js';
import { FreeSpace, parseBytes } from '../src/engine/diskSpace.js';
import { DiskFull } from '../src/engine/errors.js';
import { Engine } from '../src/engine/index.js';
import { tempDir } from './helpers/cli.js';
import { until } from './helpers/http.js';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

describe('telling a full disk', () => {
  it('knows the errors of Node, LMDB and DuckDB that mean no room', () => {
    for (const code of ['ENOSPC', 'EDQUOT', 'EIO', 'EFBIG']) expect(isDiskError(Object.assign(new Error('x'), { code })), code).toBe(true);
    expect(isDiskError(Object.assign(new Error('Input/output error'), { code: 5 }))).toBe(true); // LMDB: errno as a number
    expect(isDiskError(Object.assign(new Error('x'), { code: -30792 }))).toBe(true); // MDB_MAP_FULL
    expect(isDiskError(new Error('MDB_MAP_FULL: Environment mapsize limit reached'))).toBe(true);
    expect(isDiskError(new Error('IO Error: Could not write file "x.duckdb.wal": No space left on device'))).toBe(true);
    expect(isDiskError(Object.assign(new Error('x'), { errno: -28 }))).toBe(true);
    for (const other of [new Error('boom'), Object.assign(new Error('x'), { code: 'ENOENT' }), null, 'ENOSPC']) expect(isDiskError(other)).toBe(false);
    const full = asDiskFull(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }), 'an object');
    expect(full).toBeInstanceOf(DiskFull);
    expect((full as DiskFull).message).toMatch(/^the disk is full: an object could not be written \(ENOSPC/);
    const other = new Error('boom');
    expect(asDiskFull(other)).toBe(other);
  });

  it("reads the reason of a failed LMDB commit and observes lmdb-js's second promise", async () => {
    let rejectCause!: (err: Error) => void;
    const commitError = new Promise((_, reject) => (rejectCause = reject));
    const failed = Object.assign(new Error('Commit failed (see commitError for details)'), { commitError });
    const write = diskWrite('the record store', Promise.reject(failed));
    rejectCause(Object.assign(new Error('Input/output error'), { code: 5 }));
    await expect(write).rejects.toThrow(/the record store could not be written \(Input\/output error\)/);
  });

  it('parses sizes and computes the floor from the environment', () => {
    expect([parseBytes('1048576'), parseBytes('512m'), parseBytes('1G'), parseBytes('2KiB'), parseBytes(''), parseBytes('lots')]).toEqual([2 ** 20, 512 * 2 ** 20, 2 ** 30, 2048, undefined, undefined]);
    const dir = tempDir();
    dirs.push(dir);
    const fs = statfsSync(dir.path);
    const total = fs.blocks * fs.bsize;
    const floor = (opts: ConstructorParameters<typeof FreeSpace>[1]) => new FreeSpace(dir.path, opts).measure().floor;
    expect(floor({ minFreeBytes: 12345 })).toBe(12345);
    expect(floor({ minFreePercent: 10 })).toBe(Math.floor(total / 10));
    expect(floor({ minFreeBytes: 1, minFreePercent: 10 })).toBe(1);
    const fromEnv = (env: Record<string, string>) => configFromEnv(env).disk;
    expect(floor(fromEnv({}))).toBe(Math.min(2 ** 30, Math.floor(total * 0.05)));
    expect(floor(fromEnv({ SVC_MIN_FREE_BYTES: '', SVC_MIN_FREE_PERCENT: ' ' }))).toBe(Math.min(2 ** 30, Math.floor(total * 0.05)));
    expect(floor(fromEnv({ SVC_MIN_FREE_BYTES: '2g' }))).toBe(2 * 2 ** 30);
    expect(floor(fromEnv({ SVC_MIN_FREE_PERCENT: '10' }))).toBe(Math.floor(total / 10));
    expect(floor(fromEnv({ SVC_MIN_FREE_BYTES: 'lots', SVC_MIN_FREE_PERCENT: '-1' }))).toBe(Math.min(2 ** 30, Math.floor(total * 0.05)));
    expect(new FreeSpace(dir.path, fromEnv({ SVC_MIN_FREE_BYTES: '0' })).ok()).toBe(true);
    expect(() => new FreeSpace(dir.path, { minFreeBytes: 2 ** 60 }).check('ingest')).toThrow(DiskFull);
  });

  it('a job that meets a full disk waits for space without using up its attempts', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const engine = await Engine.open(join(dir.path, 'data'), { minFreeBytes: 0 });
    try {
      await engine.init('acme', 'admin@acme.test');
      const t = engine.localCaller().tenant_id;
      let calls = 0;
      engine.jobs.register('needs_room', {
        maxAttempts: 1,
        handler: async () => {
          if (++calls <= 2) throw new DiskFull();
          return { calls };
        },
      });
      const job = await engine.jobs.enqueue(t, 'needs_room', {});
      const waiting = await until('the first wait', () => {
        const j = engine.jobs.get(t, job.job_id);
        return j.disk_waits === 1 ? j : undefined;
      });
      // not an attempt, and not at once: a second later (sooner only if space is freed meanwhile)
      expect(waiting).toMatchObject({ status: 'pending', attempts: 0, error_message: expect.stringMatching(/disk is full/) });
      expect(Date.parse(waiting.next_attempt_at!) - Date.parse(waiting.updated_at)).toBeGreaterThanOrEqual(900);
      expect(await engine.jobs.settled(t, job.job_id)).toMatchObject({ status: 'succeeded', attempts: 1, result: { calls: 3 }, disk_waits: 0 });
    } finally {
      await engine.close();
    }
  });

  it('a SQL database that a full disk left half-made is made again from the records', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const dataDir = join(dir.path, 'data');
    let engine = await Engine.open(dataDir, { minFreeBytes: 0 });
    let caller;
    try {
      await engine.init('acme', 'admin@acme.test');
      caller = engine.localCaller();
      await engine.datasets.create(caller, { dataset_id: 'logs' });
      const run = await engine.ingest.submit(caller, Readable.from([Buffer.from('{"n":1}\n{"n":2}\n')]), { dataset_id: 'logs', format: 'ndjson' });
      expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
    } finally {
      await engine.close();
    }
    writeFileSync(join(dataDir, 'sql', `${caller.tenant_id}.duckdb`), Buffer.alloc(4096)); // what a creation cut short leaves

    engine = await Engine.open(dataDir, { minFreeBytes: 0 });
    try {
      caller = engine.localCaller();
      const answer = await engine.sql.query(caller, { sql: 'SELECT sum(n) AS total FROM logs' });
      expect(Number(answer.records[0].metadata.total)).toBe(3);
    } finally {
      await engine.close();
    }
  });
});
