/**
 * Merges keep pace with ingest: while adds keep the text worker busy, each add is followed by as
 * long again of merging, so a burst of batches does not leave a segment per batch behind (merges
 * run between messages too, but a busy worker has no time between them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layout } from '../src/engine/layout.js';
import type { StoredRecord } from '../src/engine/records.js';
import { DEFAULT_SEARCH_CONFIG } from '../src/engine/sources/sources.js';
import { openStore } from '../src/engine/store/db.js';
import { TextIndexes } from '../src/engine/text/textIndexes.js';
import { DATA, tempDir } from './helpers/cli.js';

const LINES = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log'), 'utf8').split(/\r?\n/).filter(Boolean);
const SEGMENT = 200;
const BATCHES = 40;

const dir = tempDir('svc-merge-pace-');
const store = openStore(dir.path);
const text = new TextIndexes(store, dir.path, () => DEFAULT_SEARCH_CONFIG, SEGMENT);

afterAll(async () => {
  await text.close();
  await store.close();
  dir.remove();
});

describe('segment merges under a burst of adds', () => {
  it('leave far fewer segments than batches, and every record searchable', async () => {
    const record = (seq: number) => ({ seq, title: null, body: LINES[(seq - 1) % LINES.length] }) as StoredRecord;
    const batches = Array.from({ length: BATCHES }, (_, b) => Array.from({ length: SEGMENT }, (_, i) => record(b * SEGMENT + i + 1)));
    await Promise.all(batches.map((batch) => text.added('t', 'logs', batch))); // all queued at once: the worker has no time between them
    const segments = readdirSync(dirname(layout.textSnapshot(dir.path, 't', 'logs', 0))).filter((f) => /\.seg-\d+$/.test(f));
    // 40 sealed segments of 200 records, merged four at a time as they come: a handful is left (40 without the merges paid by adds)
    expect(segments.length).toBeLessThanOrEqual(BATCHES / 3);
    const found = await text.search('t', 'logs', 'PacketResponder', { maxExpansions: 0, deadline: Infinity }, 60_000);
    const expected = batches.flat().filter((r) => /PacketResponder/.test(r.body)).length;
    expect(found.total).toBe(expected);
  });
});
