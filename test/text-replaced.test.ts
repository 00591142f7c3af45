/**
 * A record replaced twice — 5 by 10, then 10 by 12 — leaves only 12 in the store. An index that
 * replays 12 from the store without having read 10 (it reopens without its in-memory segment's
 * snapshot, or from a snapshot older than both) learns only that 10 is gone: record 5, sealed or
 * in memory, must still go, as the store says.
 */
import { mkdtempSync, rmSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../src/engine/auth/caller.js';
import { Engine } from '../src/engine/index.js';
import { openStore, type Store } from '../src/engine/store/db.js';
import { TextIndex } from '../src/engine/text/textIndex.js';

describe('a sealed record replaced twice', () => {
  let dir: string;
  let engine: Engine;
  let caller: Caller;
  let store: Store;
  const indexes: TextIndex[] = [];
  const open = (name: string) => {
    const config = engine.sources.searchConfig(caller.tenant_id, 'kv');
    const index = new TextIndex(store, caller.tenant_id, 'kv', join(dir, 'under-test', `${name}.snapshot`), config, 100).open();
    indexes.push(index);
    return index;
  };
  const send = async (rows: object[]) => {
    const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'))]), { dataset_id: 'kv', format: 'ndjson', filename: `${Math.random()}.ndjson` });
    expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
  };
  const seqsOf = (index: TextIndex, text: string) => [...index.search(text, { maxExpansions: 0, deadline: Infinity }).seqs];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-replaced-'));
    engine = await Engine.open(join(dir, 'data'));
    await engine.init('acme', 'admin@acme.test');
    caller = engine.localCaller();
    await engine.datasets.create(caller, { dataset_id: 'kv', semantic: false });
    await send(Array.from({ length: 350 }, (_, i) => ({ id: `r${i}`, body: `alpha original${i}` })));
    store = openStore(join(dir, 'data'));
  });

  afterAll(async () => {
    for (const index of indexes) index.close();
    await engine?.close({ drain: false });
    rmSync(dir, { recursive: true, force: true });
  });

  it('stays gone when the index reopens without its snapshot', async () => {
    const index = open('chain');
    expect(index.segments).toBe(3); // records 1–300 sealed in three files, 301–350 in memory
    expect(seqsOf(index, 'original5')).toEqual([6]);
    // each replacement reaches the index as it commits, as the worker's adds do
    for (const body of ['alpha first', 'alpha second']) {
      await send([{ id: 'r5', body }]);
      index.catchUp();
    }
    expect(seqsOf(index, 'original5')).toEqual([]);
    expect(seqsOf(index, 'second')).toEqual([352]);
    index.snapshot(true);
    index.close();

    const snapshot = join(dir, 'under-test', 'chain.snapshot');
    const whole = open('chain'); // with its snapshot
    expect(seqsOf(whole, 'original5')).toEqual([]);
    whole.close();
    truncateSync(snapshot, Math.floor(statSync(snapshot).size / 2));
    const again = open('chain');
    expect(again.segments).toBe(3);
    expect(seqsOf(again, 'original5')).toEqual([]);
    expect(seqsOf(again, 'first')).toEqual([]);
    expect(seqsOf(again, 'second')).toEqual([352]);
    // it ranks as an index built from the store alone
    const fresh = open('fresh');
    expect(again.search('alpha', { maxExpansions: 0, deadline: Infinity, top: 400 })).toEqual(fresh.search('alpha', { maxExpansions: 0, deadline: Infinity, top: 400 }));
    expect(again.search('alpha', { maxExpansions: 0, deadline: Infinity }).total).toBe(350);
    // what the walk removed from sealed files stays removed after its snapshot is written and read
    again.snapshot(true);
    again.close();
    const third = open('chain');
    expect(seqsOf(third, 'original5')).toEqual([]);
    expect(third.search('alpha', { maxExpansions: 0, deadline: Infinity }).total).toBe(350);
  });

  it('stays gone when the index catches up from a snapshot older than the chain, sealed or in memory', async () => {
    const index = open('behind');
    index.snapshot(true);
    index.close();
    // while no index reads them: r7 (sealed, seq 8) and r302 (in memory) replaced twice
    for (const body of ['alpha first', 'alpha second']) await send([{ id: 'r7', body }, { id: 'r302', body: `${body} too` }]);
    const behind = open('behind');
    expect(seqsOf(behind, 'original7')).toEqual([]);
    expect(seqsOf(behind, 'original302')).toEqual([]);
    expect(seqsOf(behind, 'second').length).toBe(3); // r5, r7 and r302, once each
    behind.snapshot(true);
    behind.close();
    const reread = open('behind');
    expect(seqsOf(reread, 'original7')).toEqual([]);
    expect(seqsOf(reread, 'original302')).toEqual([]);
    const fresh = open('fresh-behind');
    expect(reread.search('alpha', { maxExpansions: 0, deadline: Infinity, top: 400 })).toEqual(fresh.search('alpha', { maxExpansions: 0, deadline: Infinity, top: 400 }));
  });
});
