/**
 * A record whose input names no id gets one derived from its object and line. In a dataset made
 * now those ids sort in line order, so an object's ids are stored one after another in the id
 * index; a dataset made before keeps the hashed ids it had, so its objects ingested again still
 * find their records. Either way the same object sent twice adds nothing.
 */
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { lineIds } from '../src/engine/ingest/transform.js';
import type { StoredRecord } from '../src/engine/records.js';
import type { Store } from '../src/engine/store/db.js';
import { keys } from '../src/engine/store/keys.js';
import { DATA, tempDir } from './helpers/cli.js';

const LOG = readFileSync(`${DATA}/loghub/HDFS/HDFS_2k.log`);
const LINES = 2000;

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;
let store: Store;

async function ingest(d: string) {
  const run = await engine.ingest.submit(caller, Readable.from([LOG]), { dataset_id: d, format: 'text', filename: 'hdfs.log' });
  const done = await engine.ingest.wait(caller, run.ingest_run_id);
  expect(done.status).toBe('ready');
  return done.documents;
}

/** The dataset's id index in key order: the seqs it points to. */
const seqsByIdOrder = (d: string) => [...store.ids.getRange({ start: [caller.tenant_id, d], end: [caller.tenant_id, d, '\uffff'] })].map((e) => e.value);
const records = (d: string) => [...store.records.getRange({ start: [caller.tenant_id, d], end: [caller.tenant_id, d, Infinity] })].map((e) => e.value as StoredRecord);
const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]);

beforeAll(async () => {
  dir = tempDir('svc-line-ids-');
  engine = await Engine.open(dir.path);
  await engine.init('ids', 'admin@localhost');
  caller = engine.localCaller();
  store = (engine as unknown as { store: Store }).store;
  await engine.datasets.create(caller, { dataset_id: 'fresh', semantic: false });
  await engine.datasets.create(caller, { dataset_id: 'older', semantic: false });
  // a dataset made before svc ordered its ids has no flag
  const older = store.meta.get(keys.dataset(caller.tenant_id, 'older'));
  delete older.ordered_ids;
  await store.meta.put(keys.dataset(caller.tenant_id, 'older'), older);
});

afterAll(async () => {
  await engine.close();
  dir.remove();
});

describe('ids derived from lines', () => {
  it('sort in line order in a dataset made now', async () => {
    expect(engine.datasets.state(caller.tenant_id, 'fresh').ordered_ids).toBe(true);
    expect((await ingest('fresh')).parsed).toBe(LINES);
    const recs = records('fresh');
    expect(recs).toHaveLength(LINES);
    const ids = lineIds(recs[0].source_key, recs[0].etag, true);
    expect(recs.every((r) => r.id === ids(r.line))).toBe(true);
    expect(increasing(seqsByIdOrder('fresh'))).toBe(true);
  });

  it('stay hashed in a dataset made before', async () => {
    expect((await ingest('older')).parsed).toBe(LINES);
    const recs = records('older');
    const ids = lineIds(recs[0].source_key, recs[0].etag, false);
    expect(recs.every((r) => r.id === ids(r.line))).toBe(true);
    expect(increasing(seqsByIdOrder('older'))).toBe(false);
  });

  it('find their records when the same object comes again, in both', async () => {
    for (const d of ['fresh', 'older']) {
      const docs = await ingest(d);
      expect(docs.duplicates, d).toBe(LINES);
      expect(engine.datasets.state(caller.tenant_id, d).record_count, d).toBe(LINES);
    }
  });
});
