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
import { TextIndex } from './textIndex.js';

const dataDir: string = workerData.dataDir;
const store = openStore(dataDir);
const open = new Map<string, TextIndex>();

function index({ t, d, config }: Target): TextIndex {
  const key = `${t}/${d}`;
  let found = open.get(key);
  if (!found) {
    found = new TextIndex(store, t, d, join(dataDir, 'indexes', t, d, 'text.snapshot'), config).open();
    open.set(key, found);
  }
  return found;
}

function handle(req: TextRequest): unknown {
  switch (req.op) {
    case 'add':
      return index(req.target).add(req.records);
    case 'catchUp':
      return index(req.target).catchUp();
    case 'search':
      return index(req.target).search(req.text, req.maxExpansions, req.extra);
    case 'remove':
      return index(req.target).remove(req.seqs);
    case 'snapshot':
      return index(req.target).snapshot();
    case 'snapshotAll':
      return [...open].map(([key, idx]) => ({ key, gone: idx.snapshot() }));
    case 'forget':
      for (const key of [...open.keys()]) if (key === `${req.t}/${req.d}` || (req.d === undefined && key.startsWith(`${req.t}/`))) open.delete(key);
      return null;
  }
}

parentPort!.on('message', ({ id, req }: { id: number; req: TextRequest }) => {
  try {
    const value = handle(req);
    const transfer = req.op === 'search' ? [(value as TextResult).seqs.buffer, (value as TextResult).scores.buffer] : [];
    parentPort!.postMessage({ id, value } satisfies TextReply, transfer as ArrayBuffer[]);
  } catch (err) {
    // the store is the truth: an index that failed is dropped, and rebuilt from it on next use
    if ('target' in req) open.delete(`${req.target.t}/${req.target.d}`);
    parentPort!.postMessage({ id, error: (err as Error).message } satisfies TextReply);
  }
});
