/**
 * The directory connector's tailer over real files in a temp dir: appends, rotation by rename,
 * copytruncate, new and deleted files, gzip, chunking with a crash between chunks, exclude globs and
 * inode reuse; and the watcher that tells when to look again.
 */
import { appendFileSync, mkdirSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tailDirectory, type Checkpoints, type TailChunk, type TailEnd, type TailOptions } from '../src/engine/connectors/directory/tail.js';
import { watchDirectory } from '../src/engine/connectors/directory/watch.js';
import { tempDir } from './helpers/cli.js';
import { until } from './helpers/http.js';

const OPTS: TailOptions = { maxChunkBytes: 1 << 20, maxFiles: 100, maxDecompressedBytes: 1 << 20 };

interface Call {
  chunks: TailChunk[];
  end: TailEnd;
  /** the bytes handed out, as text */
  text: string;
  /** the checkpoints a caller holds afterwards */
  checkpoints: Checkpoints;
}

/** One call of the tailer, run to its end, as a caller storing every chunk would see it. */
async function tail(root: string, checkpoints: Checkpoints, opts: Partial<TailOptions> & { include?: string[]; exclude?: string[] } = {}): Promise<Call> {
  const gen = tailDirectory(root, opts.include ?? ['*.log'], opts.exclude ?? [], checkpoints, { ...OPTS, ...opts });
  const chunks: TailChunk[] = [];
  for (;;) {
    const next = await gen.next();
    if (next.done) {
      const end = next.value as TailEnd;
      return { chunks, end, text: chunks.map((c) => c.bytes.toString()).join(''), checkpoints: end.checkpoints };
    }
    chunks.push(next.value);
  }
}

const byPath = (cps: Checkpoints) => Object.fromEntries(Object.values(cps).map((c) => [c.path, c.offset]));

let dir: { path: string; remove: () => void };
let root: string;
const file = (name: string) => join(root, name);
beforeEach(() => {
  dir = tempDir('svc-tail-');
  root = dir.path;
});
afterEach(() => dir.remove());

describe('tailDirectory', () => {
  it('hands out whole lines as they are appended, and keeps a partial last line until its newline', async () => {
    writeFileSync(file('app.log'), 'one\ntwo\nthr');
    const first = await tail(root, {});
    expect(first.text).toBe('one\ntwo\n');
    expect(first.chunks.map((c) => c.path)).toEqual(['app.log']);
    expect(byPath(first.checkpoints)).toEqual({ 'app.log': 8 });

    expect((await tail(root, first.checkpoints)).text).toBe('');
    appendFileSync(file('app.log'), 'ee\nfour\nfi');
    const second = await tail(root, first.checkpoints);
    expect(second.text).toBe('three\nfour\n');
    appendFileSync(file('app.log'), 've\n');
    expect((await tail(root, second.checkpoints)).text).toBe('five\n');
  });

  it('does not change the checkpoints it is given', async () => {
    writeFileSync(file('app.log'), 'one\n');
    const first = await tail(root, {});
    const frozen = JSON.stringify(first.checkpoints);
    appendFileSync(file('app.log'), 'two\n');
    await tail(root, first.checkpoints);
    expect(JSON.stringify(first.checkpoints)).toBe(frozen);
  });

  it('reads a file rotated by rename to its end (its partial line too) before the new file, every line once', async () => {
    writeFileSync(file('app.log'), 'a1\na2\n');
    const first = await tail(root, {});
    expect(first.text).toBe('a1\na2\n');
    // lines written just before the rename, the last one without its newline
    appendFileSync(file('app.log'), 'a3\na4');
    renameSync(file('app.log'), file('app.log.1'));
    writeFileSync(file('app.log'), 'b1\nb2\n');
    const second = await tail(root, first.checkpoints);
    expect(second.chunks.map((c) => [c.path, c.bytes.toString()])).toEqual([
      ['app.log.1', 'a3\na4'],
      ['app.log', 'b1\nb2\n'],
    ]);
    // app.log.1 is not taken in by *.log: dropped once read
    expect(byPath(second.checkpoints)).toEqual({ 'app.log': 6 });
    expect((await tail(root, second.checkpoints)).text).toBe('');
  });

  it('keeps the checkpoint of a rotated file the globs still take in, so it is not read again', async () => {
    writeFileSync(file('app.log'), 'a1\n');
    const first = await tail(root, {}, { include: ['app.log*'] });
    appendFileSync(file('app.log'), 'a2\n');
    renameSync(file('app.log'), file('app.log.1'));
    writeFileSync(file('app.log'), 'b1\n');
    const second = await tail(root, first.checkpoints, { include: ['app.log*'] });
    expect(second.text).toBe('a2\nb1\n');
    expect(byPath(second.checkpoints)).toEqual({ 'app.log': 3, 'app.log.1': 6 });
    expect((await tail(root, second.checkpoints, { include: ['app.log*'] })).text).toBe('');
  });

  it('reads a file truncated in place (copytruncate) from its start again', async () => {
    writeFileSync(file('app.log'), 'old line one\nold line two\n');
    const first = await tail(root, {});
    truncateSync(file('app.log'), 0);
    appendFileSync(file('app.log'), 'new\n');
    const second = await tail(root, first.checkpoints);
    expect(second.text).toBe('new\n');
    expect(byPath(second.checkpoints)).toEqual({ 'app.log': 4 });
  });

  it('tells a rewritten file (same inode, as long, other first bytes) by its fingerprint', async () => {
    writeFileSync(file('app.log'), 'first version\n');
    const first = await tail(root, {});
    // rewritten in place, longer than what was read: only the fingerprint tells
    writeFileSync(file('app.log'), 'second version, longer\n');
    expect(statSync(file('app.log')).ino).toBe(Object.values(first.checkpoints)[0].ino);
    expect((await tail(root, first.checkpoints)).text).toBe('second version, longer\n');
  });

  it('reads a reused inode (another file under a checkpointed dev:ino) from its start, told by the fingerprint', async () => {
    writeFileSync(file('a.log'), 'aaaa\n');
    const first = await tail(root, {});
    const [cp] = Object.values(first.checkpoints);
    // another file takes the same dev:ino (as when an inode is reused after a delete): only the fingerprint tells
    rmSync(file('a.log'));
    writeFileSync(file('b.log'), 'bbbbbbbb\n');
    const b = statSync(file('b.log'));
    const reused: Checkpoints = { [`${b.dev}:${b.ino}`]: { ...cp, dev: b.dev, ino: b.ino, path: 'b.log' } };
    expect((await tail(root, reused)).text).toBe('bbbbbbbb\n');
  });

  it('reads a new file from its start, and drops the checkpoint of a deleted one', async () => {
    writeFileSync(file('a.log'), 'a\n');
    const first = await tail(root, {});
    writeFileSync(file('b.log'), 'b\n');
    mkdirSync(file('sub'));
    writeFileSync(file('sub/c.log'), 'c\n'); // *.log is the top level only
    const second = await tail(root, first.checkpoints);
    expect(second.text).toBe('b\n');
    expect(Object.keys(byPath(second.checkpoints)).sort()).toEqual(['a.log', 'b.log']);
    rmSync(file('a.log'));
    const third = await tail(root, second.checkpoints);
    expect(third.text).toBe('');
    expect(Object.keys(byPath(third.checkpoints))).toEqual(['b.log']);
    expect((await tail(root, {}, { include: ['**/*.log'] })).text).toBe('b\nc\n');
  });

  it('leaves out files an exclude glob names, symlinks, and files past maxFiles until there is room', async () => {
    writeFileSync(file('a.log'), 'a\n');
    writeFileSync(file('b.log'), 'b\n');
    writeFileSync(file('debug.log'), 'debug\n');
    writeFileSync(file('outside.txt'), 'outside\n');
    symlinkSync(file('outside.txt'), file('link.log'));
    const first = await tail(root, {}, { exclude: ['debug.*'], maxFiles: 1 });
    expect(first.text).toBe('a\n');
    const second = await tail(root, first.checkpoints, { exclude: ['debug.*'], maxFiles: 2 });
    expect(second.text).toBe('b\n');
    expect((await tail(root, second.checkpoints, { exclude: ['debug.*'], maxFiles: 10 })).text).toBe('');
  });

  it('reads a gzip file (told by its bytes, not its name) whole once, and not again', async () => {
    const content = 'g1\ng2\ng3';
    writeFileSync(file('old.log'), gzipSync(content));
    const first = await tail(root, {});
    expect(first.text).toBe(content);
    const [cp] = Object.values(first.checkpoints);
    expect(cp.offset).toBe(statSync(file('old.log')).size);
    expect(cp.inflated).toBeUndefined();
    expect((await tail(root, first.checkpoints)).text).toBe('');
    // another member appended: the same first bytes, so not read again
    appendFileSync(file('old.log'), gzipSync('g4\n'));
    expect((await tail(root, first.checkpoints)).text).toBe('');
  });

  it('records a corrupt or too large gzip file as read, names it in the problems, and goes on', async () => {
    writeFileSync(file('a.log'), Buffer.concat([gzipSync('x\n').subarray(0, 10), Buffer.from('not gzip at all')]));
    writeFileSync(file('b.log'), gzipSync(Buffer.alloc(4096, 'y')));
    writeFileSync(file('c.log'), 'fine\n');
    const first = await tail(root, {}, { maxDecompressedBytes: 1024, maxChunkBytes: 100_000 });
    expect(first.text).toBe('fine\n');
    expect(first.end.problems.map((p) => p.path)).toEqual(['a.log', 'b.log']);
    expect(first.end.problems[0].reason).toMatch(/corrupt_gzip/);
    expect(first.end.problems[1].reason).toMatch(/decompressed_too_large/);
    const again = await tail(root, first.checkpoints, { maxDecompressedBytes: 1024 });
    expect(again.text).toBe('');
    expect(again.end.problems).toEqual([]);
  });

  it('cuts a backlog into chunks of at most maxChunkBytes at line ends, and resumes after any one of them', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i} ${'x'.repeat(i % 37)}\n`);
    const long = `${'L'.repeat(250)}\n`; // longer than a chunk: cut at the limit
    const content = lines.slice(0, 100).join('') + long + lines.slice(100).join('');
    writeFileSync(file('app.log'), content);
    const max = 100;
    const whole = await tail(root, {}, { maxChunkBytes: max });
    expect(whole.text).toBe(content);
    for (const c of whole.chunks) {
      expect(c.bytes.length).toBeLessThanOrEqual(max);
      if (c.bytes.length < max) expect(c.bytes.at(-1)).toBe(0x0a);
    }

    // a caller that stores only the first chunk (with its checkpoints) and then crashes, again and again
    let handed = '';
    let stored: Checkpoints = {};
    for (let calls = 0; ; calls++) {
      expect(calls).toBeLessThan(1000);
      const gen = tailDirectory(root, ['*.log'], [], stored, { ...OPTS, maxChunkBytes: max });
      const next = await gen.next();
      await gen.return(undefined as never);
      if (next.done) break;
      handed += next.value.bytes.toString();
      stored = next.value.checkpoints;
    }
    expect(handed).toBe(content);
  });

  it('resumes a gzip file handed out in several chunks after the last one stored', async () => {
    const content = Array.from({ length: 300 }, (_, i) => `gz line ${i}\n`).join('');
    writeFileSync(file('big.log'), gzipSync(content));
    let handed = '';
    let stored: Checkpoints = {};
    for (let calls = 0; ; calls++) {
      expect(calls).toBeLessThan(1000);
      const gen = tailDirectory(root, ['*.log'], [], stored, { ...OPTS, maxChunkBytes: 256 });
      const next = await gen.next();
      await gen.return(undefined as never);
      if (next.done) break;
      handed += next.value.bytes.toString();
      stored = next.value.checkpoints;
    }
    expect(handed).toBe(content);
  });
});

describe('watchDirectory', () => {
  const watchResources = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'FSEventWrap').length;

  it('calls back after an append, by events or by polling, and leaves nothing running once closed', async () => {
    writeFileSync(file('app.log'), 'one\n');
    const before = watchResources();
    let calls = 0;
    const watcher = watchDirectory(root, () => calls++, { pollMs: 100, debounceMs: 20 });
    await new Promise((ok) => setTimeout(ok, 300));
    const settled = calls;
    appendFileSync(file('app.log'), 'two\n');
    await until('a change to be seen', () => (calls > settled ? true : undefined), 5000);
    watcher.close();
    await until('the watcher to stop', () => (watchResources() <= before ? true : undefined), 5000);
    const after = calls;
    appendFileSync(file('app.log'), 'three\n');
    await new Promise((ok) => setTimeout(ok, 300));
    expect(calls).toBe(after);
  });

  it('polls when there is nothing to watch by events, and does not throw when the directory goes', async () => {
    const sub = join(root, 'later');
    let calls = 0;
    const watcher = watchDirectory(sub, () => calls++, { pollMs: 50, debounceMs: 10 });
    await new Promise((ok) => setTimeout(ok, 200));
    mkdirSync(sub);
    writeFileSync(join(sub, 'x.log'), 'x\n');
    await until('the new directory to be seen by polling', () => (calls > 0 ? true : undefined), 5000);
    rmSync(sub, { recursive: true });
    const seen = calls;
    await until('its removal to be seen', () => (calls > seen ? true : undefined), 5000);
    watcher.close();
  });
});
