/**
 * The SQL index takes an ingest run's records from memory as batches commit, a load's worth at a
 * time (HELD_ROWS), instead of reading the run back from the store after it: its rows are in SQL
 * while the run goes on, in whole ingest batches; records past a gap in sequence, or held when a
 * deletion came, are left to the catch-up from the store, which never loads a deleted record.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { BATCH_SIZE } from '../src/engine/ingest/pipeline.js';
import type { StoredRecord } from '../src/engine/records.js';
import { HELD_ROWS } from '../src/engine/sql/heldRecords.js';
import { tempDir } from './helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;

const ndjson = (n: number, tag: string) => Array.from({ length: n }, (_, i) => JSON.stringify({ id: `${tag}-${i}`, i, msg: `event ${i} of ${tag}` })).join('\n') + '\n';

async function ingest(datasetId: string, body: string) {
  const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: datasetId, format: 'ndjson', filename: 'data.ndjson' });
  return { run, done: engine.ingest.wait(caller, run.ingest_run_id) };
}

const count = async (table: string) => {
  const { records } = await engine.sql.query(caller, { sql: `SELECT count(*) AS n, coalesce(max(_seq), 0) AS m FROM ${table}` });
  return records[0].metadata as { n: number; m: number };
};

/** Records as a batch commit makes them, from `seq` on; the store never saw them. */
const made = (from: number, n: number): StoredRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `made-${from + i}`, seq: from + i, title: null, body: `made ${from + i}`, time: null, metadata: { i: from + i },
    created_at: new Date().toISOString(), source_key: 'made', bucket: 'hosted', key: 'made', etag: 'made', line: i + 1, transform_version: 2,
  }));

beforeAll(async () => {
  dir = tempDir('svc-sql-held-');
  engine = await Engine.open(dir.path);
  await engine.init('held', 'admin@localhost');
  caller = engine.localCaller();
});

afterAll(async () => {
  await engine.close();
  dir.remove();
});

describe('an ingest run in SQL', () => {
  it('shows in whole batches while the run goes on, and whole once it is ready', async () => {
    const LINES = 2 * HELD_ROWS + 3 * BATCH_SIZE;
    await engine.datasets.create(caller, { dataset_id: 'big' });
    expect(await count('big')).toEqual({ n: 0, m: 0 }); // the tenant's database opens now, not mid-run (opening catches up from the store)
    const { run, done } = await ingest('big', ndjson(LINES, 'big'));
    const seen = new Set<number>();
    let ready = false;
    void done.then(() => (ready = true));
    while (!ready) {
      const { n, m } = await count('big').catch(() => ({ n: 0, m: 0 }));
      expect(n % BATCH_SIZE).toBe(0);
      expect(m).toBe(n);
      seen.add(n);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect((await done).status).toBe('ready');
    expect(await count('big')).toEqual({ n: LINES, m: LINES });
    // rows before the run was whole: the held loads, not one load after it
    expect([...seen].some((n) => n > 0 && n < LINES), `counts seen during run ${run.ingest_run_id}: ${[...seen]}`).toBe(true);
  });
});

describe('held records the store may no longer match', () => {
  beforeAll(async () => {
    await engine.datasets.create(caller, { dataset_id: 'small' });
    expect((await (await ingest('small', ndjson(10, 'small'))).done).status).toBe('ready');
  });

  it('loads a load’s worth that follows on from the table', async () => {
    const t = caller.tenant_id;
    await engine.sql.indexes.added(t, 'small', made(11, HELD_ROWS - 1));
    expect(await count('small')).toEqual({ n: 10, m: 10 }); // held, not yet a load's worth
    await engine.sql.indexes.added(t, 'small', made(HELD_ROWS + 10, 1));
    expect(await count('small')).toEqual({ n: HELD_ROWS + 10, m: HELD_ROWS + 10 });
  });

  it('leaves records past a gap in sequence to the store', async () => {
    const t = caller.tenant_id;
    const before = await count('small');
    await engine.sql.indexes.added(t, 'small', made(before.m + 2, HELD_ROWS));
    expect(await count('small')).toEqual(before);
  });

  it('drops what it holds when records are deleted, and holds nothing more until a catch-up', async () => {
    const t = caller.tenant_id;
    const before = await count('small');
    await engine.sql.indexes.added(t, 'small', made(before.m + 1, HELD_ROWS - 1));
    engine.sql.indexes.deleting(t, 'small', [before.m + 1]); // as a deletion's transaction does
    await engine.sql.indexes.added(t, 'small', made(before.m + HELD_ROWS, HELD_ROWS));
    expect(await count('small')).toEqual(before);
    // a catch-up reads the store (which has none of the made records) and holding starts again
    await engine.sql.indexes.catchUp(t, 'small');
    await engine.sql.indexes.added(t, 'small', made(before.m + 1, HELD_ROWS));
    expect(await count('small')).toEqual({ n: before.n + HELD_ROWS, m: before.m + HELD_ROWS });
  });
});
