import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LIMITS } from '../../../api/limits.js';

/** entries one poll stats: a directory connector tracks no more files than this */
const POLL_ENTRIES = LIMITS.connectorFiles;

/**
 * Calls `onChange` (debounced, at most once per `debounceMs`) when something under root may have
 * changed: fs.watch of the root itself (a recursive watch walks the whole tree synchronously as it
 * starts), and a poll of sizes and mtimes of the tree every `pollMs` for the rest (subdirectories,
 * and file systems that lose events).
 * Errors of fs.watch (no inotify watches left, the directory removed) only end the watching by
 * events: the poll goes on. `onChange` runs from a timer, so it must not throw.
 */
export function watchDirectory(root: string, onChange: () => void, opts: { pollMs?: number; debounceMs?: number; deep?: boolean } = {}): { close(): void } {
  const pollMs = opts.pollMs ?? 2000;
  const debounceMs = opts.debounceMs ?? 200;
  let closed = false;
  let debounce: NodeJS.Timeout | undefined;
  let nextPoll: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;

  const changed = () => {
    if (closed || debounce) return;
    debounce = setTimeout(() => {
      debounce = undefined;
      if (!closed) onChange();
    }, debounceMs);
  };

  const stopWatching = () => {
    watcher?.close();
    watcher = undefined;
  };
  try {
    watcher = watch(root, { persistent: true }, changed);
    watcher.on('error', stopWatching);
  } catch {
    watcher = undefined; // the directory gone, or no inotify watches left: polling alone
  }

  // the next poll is scheduled once this one ends, so two never run at once
  let last: string | undefined;
  const poll = async () => {
    const now = await snapshot(root, opts.deep ?? true);
    if (closed) return;
    if (last !== undefined && now !== last) changed();
    last = now;
    nextPoll = setTimeout(poll, pollMs);
  };
  void poll();

  return {
    close() {
      closed = true;
      stopWatching();
      clearTimeout(debounce);
      clearTimeout(nextPoll);
    },
  };
}

/** What the tree under root looks like, as a string that changes when a file is added, removed, resized or written. */
async function snapshot(root: string, deep: boolean): Promise<string> {
  const parts: string[] = [];
  const dirs = [''];
  let seen = 0;
  for (let dir = dirs.pop(); dir !== undefined && seen < POLL_ENTRIES; dir = dirs.pop()) {
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    if (dir === '' && entries.length === 0) parts.push('(empty or gone)');
    for (const entry of entries.slice(0, POLL_ENTRIES - seen)) {
      seen++;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (deep) dirs.push(path);
      } else if (entry.isFile()) {
        const st = await lstat(join(root, path)).catch(() => undefined);
        parts.push(st ? `${path}\0${st.ino}\0${st.size}\0${st.mtimeMs}` : `${path}\0gone`);
      }
    }
  }
  return parts.sort().join('\n');
}
