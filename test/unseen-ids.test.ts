/**
 * A batch whose ids are all new skips the lookup of each record's id (one read of the id index
 * answers for the batch); any doubt — an id stored in its range, an id twice, an id outside
 * printable ASCII — sends it the long way, so replacing and deduplicating stay exact.
 */
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { unseenIds } from '../src/engine/ingest/unseenIds.js';
import { openStore } from '../src/engine/store/db.js';
import { tempDir } from './helpers/cli.js';

describe('unseenIds', () => {
  const dir = tempDir('svc-unseen-');
  const store = openStore(dir.path);
  afterAll(async () => {
    await store.close();
    dir.remove();
  });

  it('answers true only when no id of the batch, nor any between its least and greatest, is stored', async () => {
    await store.ids.transaction(() => {
      for (let n = 1; n <= 10; n++) store.ids.put(['t', 'd', `a${String(n).padStart(4, '0')}`], n);
      store.ids.put(['t', 'e', 'b0005'], 1); // the next dataset's
      store.ids.put(['u', 'd', 'c0005'], 1); // another tenant's
    });
    expect(unseenIds(store, 't', 'd', [])).toBe(true);
    expect(unseenIds(store, 't', 'd', ['b0001', 'b0009', 'b0005'])).toBe(true);
    expect(unseenIds(store, 't', 'd', ['a0011', 'a0012'])).toBe(true);
    expect(unseenIds(store, 't', 'd', ['c0001', 'c0009'])).toBe(true);
    expect(unseenIds(store, 't', 'd', ['a0005'])).toBe(false);
    expect(unseenIds(store, 't', 'd', ['a0000', 'a00015'])).toBe(false); // a0001 lies between
    expect(unseenIds(store, 't', 'd', ['0', 'z'])).toBe(false);
    expect(unseenIds(store, 't', 'd', ['x1', 'x2', 'x1'])).toBe(false); // twice in the batch
    expect(unseenIds(store, 't', 'd', ['é1'])).toBe(false);
    expect(unseenIds(store, 't', 'e', ['b0005'])).toBe(false);
    expect(unseenIds(store, 't', 'd', ['x'.repeat(5000), 'y'])).toBe(false); // too long for a key: not read, refused later
  });
});

describe('ingest with ids of a field', () => {
  const dir = tempDir('svc-unseen-engine-');
  afterAll(() => dir.remove());

  it('replaces a stored id inside a new batch, counts an id repeated in one batch once, and refuses only the record of an over-long id', async () => {
    const engine = await Engine.open(dir.path);
    try {
      await engine.init('acme', 'admin@acme.test');
      const caller = engine.localCaller();
      await engine.datasets.create(caller, { dataset_id: 'kv', semantic: false });
      const send = async (rows: object[]) => {
        const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'))]), { dataset_id: 'kv', format: 'ndjson', filename: `${rows.length}-${Math.random()}.ndjson` });
        const done = await engine.ingest.wait(caller, run.ingest_run_id);
        expect(done.status).toBe('ready');
        return done;
      };
      await send([{ id: 'k1', body: 'one' }, { id: 'k3', body: 'three' }]);
      await send([{ id: 'k0', body: 'zero' }, { id: 'k1', body: 'one again' }, { id: 'k4', body: 'four' }]);
      await send([{ id: 'k7', body: 'seven' }, { id: 'k7', body: 'seven again' }]);
      // an id too long for a key is refused on its own line; the batch goes in
      const long = await send([{ id: 'a'.repeat(5000), body: 'long' }, { id: 'k9', body: 'nine' }]); // the long id sorts first
      expect(long.documents).toMatchObject({ parsed: 1, malformed: 1 });
      expect(long.errors[0]).toMatchObject({ line: 1, reason: expect.stringMatching(/id longer than 1024 bytes/) });
      const got = await engine.datasets.get(caller, 'kv');
      expect(got.record_count).toBe(6); // k0 k1 k3 k4 k7 k9
      const found = await engine.search.run(caller, { datasets: ['kv'], q: 'again', limit: 10 });
      expect(found.records.map((r) => r.id).sort()).toEqual(['k1', 'k7']);
      const one = await engine.search.run(caller, { datasets: ['kv'], text: 'one', limit: 10 });
      expect(one.records.map((r) => [r.id, r.body])).toEqual([['k1', 'one again']]);
    } finally {
      await engine.close();
    }
  });
});
