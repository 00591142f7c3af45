/**
 * The in-memory segment's snapshot is a segment file with the index's meta in its footer: read
 * back, it holds and scores exactly what was written, and goes on growing the same.
 */
import { readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Engine } from '../src/engine/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { scoreSegments } from '../src/engine/text/bm25.js';
import { LiveSegment } from '../src/engine/text/liveSegment.js';
import { BM25 } from '../src/engine/text/textIndex.js';
import { DATA, tempDir } from './helpers/cli.js';
import { fieldText, liveContents, newLive } from './helpers/liveSegment.js';

const FIELDS = ['title', 'body'];
const lines = readFileSync(join(DATA, 'loghub', 'OpenSSH', 'OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const docs = lines.map((body, i) => ({ seq: i + 1, replaces: undefined, title: i % 3 === 0 ? `sshd host ${i % 7}` : null, body }));
const QUERIES = [['authent', 'failur'], ['invalid', 'user'], ['fail', 'password', 'root'], ['sshd'], ['zzz']];

const read = <M>(path: string) => LiveSegment.read<M>(path, FIELDS, fieldText(FIELDS));
/** Every query's best 20 as [seq, score] pairs. */
const results = (live: LiveSegment) =>
  QUERIES.map((terms) => {
    const r = scoreSegments([live], terms.map((term) => ({ term, weight: 1 })), [2, 1], BM25, Date.now() + 60_000, 20);
    return [...r.seqs].map((seq, i) => [seq, r.scores[i].toFixed(9)]);
  });

describe('the in-memory segment snapshot', () => {
  const dir = tempDir('svc-snapshot-');
  afterAll(() => dir.remove());
  const path = join(dir.path, 'text.snapshot');

  it('reads back a segment that holds and scores exactly as the one written, and goes on growing the same', () => {
    const live = newLive(FIELDS);
    for (const doc of docs.slice(0, 1500)) live.add(doc);
    for (const seq of [3, 10, 11, 700, 1500]) live.remove(seq);
    live.write(path, { seq: 1500, note: 'ü' }); // removed records are left out

    const loaded = read<{ seq: number; note: string }>(path);
    expect(loaded.meta).toEqual({ seq: 1500, note: 'ü' });
    expect(loaded.live.docs).toBe(1495);
    expect(loaded.live.clean).toBe(true);
    expect(liveContents(loaded.live, FIELDS.length)).toEqual(liveContents(live, FIELDS.length));
    expect(loaded.live.totalLength).toEqual(live.totalLength);
    expect(results(loaded.live)).toEqual(results(live));
    expect(results(live)[0].length).toBe(20);

    for (const l of [live, loaded.live]) {
      for (const doc of docs.slice(1500)) l.add(doc);
      l.remove(1);
    }
    expect(liveContents(loaded.live, FIELDS.length)).toEqual(liveContents(live, FIELDS.length));
    expect(results(loaded.live)).toEqual(results(live));
    expect(loaded.live.terms.has('sshd')).toBe(true);
  });

  it('round-trips an empty segment', () => {
    newLive(FIELDS).write(path, { seq: 0 });
    const loaded = read<{ seq: number }>(path);
    expect(loaded.live.docs).toBe(0);
    loaded.live.add(docs[0]);
    expect(results(loaded.live)[3]).toEqual([[1, expect.any(String)]]);
  });

  it('refuses a file of another format, or of other fields', () => {
    writeFileSync(path, JSON.stringify({ documentCount: 0, index: [] }));
    expect(() => read(path)).toThrow(/not a text segment/);
    newLive(['body']).write(path, { seq: 0 });
    expect(() => read(path)).toThrow(/holds the fields body, not title, body/);
    newLive(['body', 'title']).write(path, { seq: 0 });
    expect(() => read(path)).toThrow(/holds the fields body, title, not title, body/);
  });
});

describe('a damaged text snapshot', () => {
  const dir = tempDir('svc-snapshot-engine-');
  afterAll(() => dir.remove());

  it('is read as no snapshot: the index comes back from the store, and is written whole again', async () => {
    let engine = await Engine.open(dir.path);
    let tenantId: string;
    let before: Awaited<ReturnType<Engine['search']['run']>>;
    try {
      await engine.init('acme', 'admin@acme.test');
      const caller = engine.localCaller();
      tenantId = caller.tenant_id;
      await engine.datasets.create(caller, { dataset_id: 'ssh', semantic: false });
      const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(lines.join('\n'))]), { dataset_id: 'ssh', format: 'text', filename: 'ssh.log' });
      expect((await engine.ingest.wait(caller, run.ingest_run_id)).status).toBe('ready');
      before = await engine.search.run(caller, { text: 'authentication failure', datasets: ['ssh'], limit: 5 });
    } finally {
      await engine.close();
    }

    const snapshot = join(dir.path, 'indexes', tenantId, 'ssh', 'text.snapshot');
    truncateSync(snapshot, Math.floor(statSync(snapshot).size / 2));
    engine = await Engine.open(dir.path);
    try {
      const after = await engine.search.run(engine.localCaller(), { text: 'authentication failure', datasets: ['ssh'], limit: 5 });
      expect(after.total.value).toBeGreaterThan(0);
      expect(after.total.value).toBe(before.total.value);
      expect(after.records.map((r) => r.id)).toEqual(before.records.map((r) => r.id));
    } finally {
      await engine.close();
    }
    expect(read<{ seq: number }>(snapshot).meta.seq).toBe(lines.length); // title and body, a text source's fields
  });
});
