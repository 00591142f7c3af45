import MiniSearch, { type Options } from 'minisearch';
import { readFileSync, truncateSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Engine } from '../src/engine/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { readSnapshot, writeSnapshot } from '../src/engine/text/snapshot.js';
import { DATA, tempDir } from './helpers/cli.js';

interface Doc { seq: number; title: string; body: string }
const options: Options<Doc> = { idField: 'seq', fields: ['title', 'body'], storeFields: [], tokenize, processTerm: normalizeTerm };
const lines = readFileSync(join(DATA, 'loghub', 'OpenSSH', 'OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const docs = lines.map((body, i): Doc => ({ seq: i + 1, title: i % 3 === 0 ? `sshd host ${i % 7}` : '', body }));
const QUERIES = ['authentication failure', 'invalid user', 'Failed password for root', 'sshd', 'reverse mapping checking getaddrinfo', 'zzz nothing'];

const results = (mini: MiniSearch<Doc>) => QUERIES.map((q) => mini.search(q, { fuzzy: 0.2, prefix: true, boost: { title: 2 } }).map((r) => [r.id, r.score.toFixed(9), [...r.terms].sort()]));

describe('text index snapshot', () => {
  const dir = tempDir('svc-snapshot-');
  afterAll(() => dir.remove());
  const path = join(dir.path, 'text.snapshot');

  it('loads back an index that answers exactly as the one written, and goes on growing the same', async () => {
    const mini = new MiniSearch(options);
    mini.addAll(docs.slice(0, 1500));
    for (const seq of [3, 10, 11, 700, 1500]) mini.discard(seq); // leaves their postings behind until a vacuum
    writeSnapshot(path, mini, { seq: 1500, note: 'ü' }); // leaves them out
    await mini.vacuum(); // MiniSearch scores an index with such postings slightly off until then

    const loaded = readSnapshot<{ seq: number; note: string }, Doc>(path, options)!;
    expect(loaded.meta).toEqual({ seq: 1500, note: 'ü' });
    expect(loaded.mini.documentCount).toBe(1495);
    expect(results(loaded.mini)).toEqual(results(mini));
    expect(results(mini)[0].length).toBeGreaterThan(10);

    // written again while most of its terms are still unread from the first file
    const again = join(dir.path, 'again.snapshot');
    writeSnapshot(again, readSnapshot(path, options)!.mini, { seq: 1500 });
    expect(results(readSnapshot(again, options)!.mini)).toEqual(results(mini));

    for (const m of [mini, loaded.mini]) {
      m.addAll(docs.slice(1500));
      m.discard(1);
      m.replace({ seq: 2, title: 'replaced', body: 'a new body about authentication failure' });
    }
    expect(results(loaded.mini)).toEqual(results(mini));
  });

  it('round-trips an empty index', () => {
    writeSnapshot(path, new MiniSearch(options), { seq: 0 });
    const loaded = readSnapshot<{ seq: number }, Doc>(path, options)!;
    expect(loaded.mini.documentCount).toBe(0);
    loaded.mini.add(docs[0]);
    expect(loaded.mini.search('sshd').map((r) => r.id)).toEqual([1]);
  });

  it('reads a file of another format as no snapshot', () => {
    writeFileSync(path, JSON.stringify(new MiniSearch(options)));
    expect(readSnapshot(path, options)).toBeNull();
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
      expect(after.total.value).toBe(before.total.value);
      expect(after.records.map((r) => r.id)).toEqual(before.records.map((r) => r.id));
    } finally {
      await engine.close();
    }
    expect(readSnapshot<{ seq: number }, Doc>(snapshot, options)!.meta.seq).toBe(lines.length);
  });
});
