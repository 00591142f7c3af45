import { createHash } from 'node:crypto';
import { lstat, open, readdir, type FileHandle } from 'node:fs/promises';
// @ts-expect-error picomatch ships no types
import picomatchUntyped from 'picomatch';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { inflated, isGzip, ObjectRefused } from '../../ingest/inflate.js';

/**
 * The directory connector's reader: `tail -F` over the files under a root. Each call looks at the
 * directory once, hands out what was added since the checkpoints it is given, and ends.
 *
 * Globs are matched against the whole root-relative posix path, picomatch's defaults: `*.log` is
 * `app.log` at the top only, `**\/*.log` is any depth, and a name starting with a dot needs a glob
 * that names the dot.
 */

/** Where the reading of one file stands; keyed in a map by `${dev}:${ino}`. */
export interface FileCheckpoint {
  dev: number;
  ino: number;
  /** path relative to the root, posix separators, where the file was last seen */
  path: string;
  /** bytes read and handed out so far (for a gzip file: its whole compressed size once read) */
  offset: number;
  /** hex sha256 of the first `fingerprint_bytes` bytes (up to 256): tells a reused inode or a rewritten file from the one read */
  fingerprint: string;
  fingerprint_bytes: number;
  /** a gzip file handed out in several chunks: decompressed bytes handed out so far (gone once it is read whole) */
  inflated?: number;
}
export type Checkpoints = Record<string, FileCheckpoint>;

export interface TailChunk {
  /** path relative to root (posix) of the file the bytes came from */
  path: string;
  /** whole lines only (ending in \n), except the tail of a file that was rotated away or a gzip file's content; decompressed for gzip */
  bytes: Buffer;
  /** the whole checkpoint map as it stands once this chunk is stored: the caller commits it with the chunk */
  checkpoints: Checkpoints;
}

export interface TailOptions {
  maxChunkBytes: number;
  maxFiles: number;
  maxDecompressedBytes: number;
}

/** A file passed over for good (a corrupt or too large gzip file), or part of the directory that could not be looked at. */
export interface TailProblem {
  path: string;
  reason: string;
}

/**
 * What the generator returns once it is done. `checkpoints` holds changes no chunk carried (deleted
 * files dropped, files that gave no bytes yet, gzip files skipped): storing it is always safe, since
 * it hands out nothing, and losing it only means the same work is redone by the next call.
 */
export interface TailEnd {
  checkpoints: Checkpoints;
  problems: TailProblem[];
}

const FINGERPRINT_BYTES = 256;
/** one read: large enough to be quick, small enough that the event loop is never held long */
const READ_BYTES = 2 ** 20;
/** entries one look at the directory visits: past it, the rest waits and no checkpoint is dropped */
const WALK_ENTRIES = 100_000;

type Matcher = (path: string) => boolean;
// picomatch ships no types
const picomatch = picomatchUntyped as unknown as (globs: string[]) => Matcher;

interface Found {
  path: string;
  dev: number;
  ino: number;
}

const keyOf = (f: { dev: number; ino: number }) => `${f.dev}:${f.ino}`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * Whether globs can take in files below the root's top level: only then does a look at the
 * directory go into its subdirectories (a file rotated into one is then not followed there).
 */
export const reachesDown = (globs: string[]) => globs.some((g) => g.includes('/'));

/** The regular files under root (its top level only, unless `deep`), in path order; symlinks are not followed. */
async function walk(root: string, problems: TailProblem[], deep: boolean): Promise<{ files: Found[]; complete: boolean }> {
  const files: Found[] = [];
  const dirs = [''];
  let entries = 0;
  let complete = true;
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    let listed;
    try {
      listed = await readdir(join(root, dir), { withFileTypes: true });
    } catch (err) {
      if (dir === '') throw err; // the root itself: the connector cannot run at all
      complete = false; // an unreadable (or vanished) subdirectory: its files are not known to be gone
      problems.push({ path: dir, reason: `not read: ${(err as Error).message}` });
      continue;
    }
    for (const entry of listed) {
      if (++entries > WALK_ENTRIES) {
        problems.push({ path: '', reason: `more than ${WALK_ENTRIES} entries under the directory: the rest were not looked at` });
        return { files: sorted(files), complete: false };
      }
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (deep) dirs.push(path);
      } else if (entry.isFile()) {
        const st = await lstat(join(root, path)).catch(() => undefined); // gone since it was listed
        if (st?.isFile()) files.push({ path, dev: st.dev, ino: st.ino });
      }
    }
  }
  return { files: sorted(files), complete };
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const sorted = (files: Found[]) => files.sort((a, b) => byPath(a.path, b.path));

/** One file to read this call. `rotated`: it left the path it was read under, so it will not grow. */
interface Task {
  file: Found;
  from?: FileCheckpoint;
  rotated: boolean;
  /** whether its checkpoint stays once it is read: it still matches the globs */
  keep: boolean;
  /** where it stands in the order: a rotated file takes its old path, ahead of the file now there */
  order: string;
}

/**
 * Hands out what the files under `root` that match `include` and none of `exclude` hold past
 * `checkpoints` (which is not changed). A file is known by its dev:ino and the fingerprint of its
 * first bytes: the same inode with other first bytes, or shorter than what was read, is a new file
 * read from 0. A file that left its path (rotation by rename) is read to its very end first, its
 * last partial line too; a file still in place keeps its last partial line until its newline comes.
 * A gzip file (known by its magic bytes) is read whole once, decompressed; if it is corrupt or too
 * large it is recorded as read and named in the returned problems (chunks it gave before the fault
 * stay handed out). At most `maxFiles` files are tracked; further ones wait for a later call.
 */
export async function* tailDirectory(root: string, include: string[], exclude: string[], checkpoints: Checkpoints, opts: TailOptions): AsyncGenerator<TailChunk, TailEnd> {
  const included = picomatch(include);
  const excluded = picomatch(exclude);
  const wanted = (path: string) => included(path) && !excluded(path);
  const problems: TailProblem[] = [];
  const { files, complete } = await walk(root, problems, reachesDown(include));
  // entries are replaced, never changed in place: a map handed out with a chunk stays as it was
  const state: Checkpoints = { ...checkpoints };

  const found = new Map(files.map((f) => [keyOf(f), f]));
  const tasks: Task[] = [];
  let leaving = 0;
  for (const [key, cp] of Object.entries(checkpoints)) {
    const file = found.get(key);
    if (!file) {
      if (complete) delete state[key]; // deleted
    } else if (file.path === cp.path) {
      if (wanted(file.path)) tasks.push({ file, from: cp, rotated: false, keep: true, order: file.path });
      else delete state[key]; // the globs no longer take it in
    } else {
      const keep = wanted(file.path);
      if (!keep) leaving++;
      tasks.push({ file, from: cp, rotated: true, keep, order: cp.path });
    }
  }
  let room = opts.maxFiles - (Object.keys(state).length - leaving);
  for (const [i, file] of files.entries()) {
    if (i % 1000 === 999) await nextTurn(); // globs over a large tree: other requests go between
    if (room <= 0) break;
    if (checkpoints[keyOf(file)] || !wanted(file.path)) continue;
    tasks.push({ file, rotated: false, keep: true, order: file.path });
    room--;
  }
  tasks.sort((a, b) => byPath(a.order, b.order) || Number(b.rotated) - Number(a.rotated));

  for (const task of tasks) yield* readFile(root, task, state, problems, opts);
  return { checkpoints: { ...state }, problems };
}

async function* readFile(root: string, task: Task, state: Checkpoints, problems: TailProblem[], opts: TailOptions): AsyncGenerator<TailChunk> {
  const { file, from } = task;
  const key = keyOf(file);
  let fh: FileHandle;
  try {
    fh = await open(join(root, file.path), 'r');
  } catch {
    return; // gone since the walk: the next call sees where it went
  }
  try {
    const st = await fh.stat();
    if (st.dev !== file.dev || st.ino !== file.ino) return; // replaced since the walk: likewise
    const size = st.size;
    const head = await readAt(fh, 0, Math.min(FINGERPRINT_BYTES, size));
    const same = !!from && from.fingerprint_bytes <= head.length && sha256(head.subarray(0, from.fingerprint_bytes)) === from.fingerprint && size >= from.offset;
    if (!same && !task.keep) {
      delete state[key]; // the inode now holds another file, under a name the globs do not take in
      return;
    }
    const base: FileCheckpoint = same ? from : { dev: file.dev, ino: file.ino, path: file.path, offset: 0, fingerprint: sha256(head.subarray(0, 0)), fingerprint_bytes: 0 };
    state[key] = { ...base, path: file.path };
    const chunk = (bytes: Buffer, cp: FileCheckpoint): TailChunk => {
      state[key] = cp;
      return { path: file.path, bytes, checkpoints: { ...state } };
    };

    // a gzip file read whole already: growth alone is not new content
    const gzipDone = same && from.offset > 0 && from.inflated === undefined;
    if (isGzip(head) && !gzipDone) {
      const whole = { ...state[key], fingerprint: sha256(head), fingerprint_bytes: head.length };
      let handed = same ? (from.inflated ?? 0) : 0;
      try {
        const content = skip(inflated(readRange(fh, 0, size), opts.maxDecompressedBytes), handed);
        for await (const bytes of cutLines(content, opts.maxChunkBytes, true)) {
          handed += bytes.length;
          yield chunk(bytes, { ...whole, inflated: handed });
        }
      } catch (err) {
        if (!(err instanceof ObjectRefused)) throw err;
        problems.push({ path: file.path, reason: `${err.code}: ${err.message}` });
      }
      const { inflated: _, ...done } = whole;
      state[key] = { ...done, offset: size };
    } else if (!isGzip(head)) {
      let offset = state[key].offset;
      for await (const bytes of cutLines(readRange(fh, offset, size), opts.maxChunkBytes, task.rotated)) {
        offset += bytes.length;
        const print = Math.min(FINGERPRINT_BYTES, offset);
        const cp = state[key];
        yield chunk(bytes, { ...cp, offset, ...(cp.fingerprint_bytes < print ? { fingerprint: sha256(head.subarray(0, print)), fingerprint_bytes: print } : {}) });
      }
    }
    if (!task.keep) delete state[key]; // rotated out of the globs and read to its end
  } finally {
    await fh.close();
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** The bytes of a file from `from` to `to`, a bounded read at a time; stops early if the file got shorter. */
async function* readRange(fh: FileHandle, from: number, to: number): AsyncGenerator<Buffer> {
  for (let pos = from; pos < to; ) {
    const bytes = await readAt(fh, pos, Math.min(READ_BYTES, to - pos));
    if (bytes.length === 0) return;
    pos += bytes.length;
    yield bytes;
  }
}

/** `input` without its first `n` bytes: the part of a gzip file's content handed out before a restart. */
async function* skip(input: AsyncIterable<Buffer>, n: number): AsyncGenerator<Buffer> {
  for await (const piece of input) {
    if (n >= piece.length) n -= piece.length;
    else {
      yield n > 0 ? piece.subarray(n) : piece;
      n = 0;
    }
  }
}

/**
 * `input` as chunks of at most `max` bytes, each ending at a newline; a line longer than `max` is
 * cut at `max`. What follows the last newline is handed out only when `withTail` (the file is done).
 */
async function* cutLines(input: AsyncIterable<Buffer>, max: number, withTail: boolean): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  for await (const piece of input) {
    pending.push(piece);
    length += piece.length;
    while (length >= max) {
      const all = Buffer.concat(pending, length);
      const end = all.lastIndexOf(0x0a, max - 1) + 1 || max;
      yield all.subarray(0, end);
      pending = [all.subarray(end)];
      length -= end;
    }
  }
  const all = Buffer.concat(pending, length);
  const end = withTail ? length : all.lastIndexOf(0x0a) + 1;
  if (end > 0) yield all.subarray(0, end);
}
