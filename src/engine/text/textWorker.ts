/**
 * The text worker: a thread that holds every open text index of a data dir, so that indexing and
 * BM25 scoring use a core of their own while the main thread parses and commits. It reads the
 * records it replays from the same LMDB environment; the main thread sends it the records it
 * has just committed.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/db.js';
import type { Target, TextReply, TextRequest, TextResult } from './protocol.js';
import { ScoringTimeout } from './bm25.js';
import { TextIndex } from './textIndex.js';

const dataDir: string = workerData.dataDir;
const store = openStore(dataDir, { mapSize: workerData.mapSize }); // the main thread's cap
/** open indexes by `tenant/dataset`, with the configuration each was opened with */
const open = new Map<string, { index: TextIndex; config: string }>();
const keyOf = (t: string, d: string) => `${t}/${d}`;

/** The dataset's index, opened on first use, and again when its search configuration changed. */
function index({ t, d, config }: Target): TextIndex {
  const wanted = JSON.stringify(config);
  const found = open.get(keyOf(t, d));
  if (found && found.config === wanted) return found.index;
  const opened = new TextIndex(store, t, d, join(dataDir, 'indexes', t, d, 'text.snapshot'), config).open();
  open.set(keyOf(t, d), { index: opened, config: wanted });
  return opened;
}

/** Writes every open index that changed; one that cannot be written does not keep the others from it. */
function snapshotAll(): { t: string; d: string; gone: number[]; error?: string }[] {
  const written = [];
  for (const { index: idx } of open.values()) {
    try {
      written.push({ t: idx.tenantId, d: idx.datasetId, gone: idx.snapshot() });
    } catch (err) {
      // its tombstones stay, and it is replayed from the store when next opened
      written.push({ t: idx.tenantId, d: idx.datasetId, gone: [], error: (err as Error).message });
    }
  }
  return written;
}

function handle(req: TextRequest): unknown {
  switch (req.op) {
    case 'add':
      return index(req.target).add(req.records);
    case 'catchUp':
      return index(req.target).catchUp();
    case 'search':
      return index(req.target).search(req.text, req.options);
    case 'remove': // a closed index loses them through their tombstones when it opens
      return open.get(keyOf(req.target.t, req.target.d))?.index.remove(req.seqs);
    case 'snapshot': // of an open index only: a dataset deleted meanwhile is not brought back
      return open.get(keyOf(req.target.t, req.target.d))?.index.snapshot() ?? [];
    case 'snapshotAll':
      return snapshotAll();
    case 'forget':
      for (const [key, { index: idx }] of open) if (idx.tenantId === req.t && (req.d === undefined || idx.datasetId === req.d)) open.delete(key);
      return null;
  }
}

parentPort!.on('message', ({ id, req }: { id: number; req: TextRequest }) => {
  try {
    const value = handle(req);
    const transfer = req.op === 'search' ? [(value as TextResult).seqs.buffer, (value as TextResult).scores.buffer] : [];
    parentPort!.postMessage({ id, value } satisfies TextReply, transfer as ArrayBuffer[]);
  } catch (err) {
    // the store is the truth: an index that failed to change is dropped, and rebuilt from it on next use;
    // one whose snapshot could not be written (a full disk) is whole, and stays as it is, changed
    if ('target' in req && req.op !== 'search' && req.op !== 'snapshot') open.delete(keyOf(req.target.t, req.target.d));
    const code = (err as NodeJS.ErrnoException).code;
    parentPort!.postMessage({ id, error: (err as Error).message, code, ...(err instanceof ScoringTimeout && { timeout: true as const }) } satisfies TextReply);
  }
});
