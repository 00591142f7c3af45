/**
 * The text worker: a thread that holds every open text index of a data dir, so that indexing and
 * BM25 scoring use a core of their own while the main thread parses and commits. It reads the
 * records it replays from the same LMDB environment; the main thread sends it the records it
 * has just committed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { layout, removeGenerations } from '../layout.js';
import { openStore } from '../store/db.js';
import { keys } from '../store/keys.js';
import type { Staged, Target, TextReply, TextRequest, TextResult } from './protocol.js';
import { ScoringTimeout } from './bm25.js';
import { removeTextFiles, TextIndex } from './textIndex.js';

const dataDir: string = workerData.dataDir;
const segmentRecords: number = workerData.segmentRecords;
/** How long a merge works before the worker looks at its messages again. */
const MERGE_SLICE_MS = 20;
/** The most a merge works right after an add, so that a search waits no longer for it. */
const PAID_MERGE_MAX_MS = 100;
const store = openStore(dataDir, { mapSize: workerData.mapSize }); // the main thread's cap
/** open indexes by `tenant/dataset`, with the configuration each was opened with */
const open = new Map<string, { index: TextIndex; config: string }>();
/** new generations being built, by `tenant/dataset`, beside the serving ones */
const staging = new Map<string, { index: TextIndex; config: string; generation: number }>();
const keyOf = (t: string, d: string) => `${t}/${d}`;

/** The generation the dataset points at, written by the main thread in the transaction that promotes it. */
function generation(t: string, d: string): number {
  store.env.resetReadTxn();
  return store.meta.get(keys.textGeneration(t, d)) ?? 0;
}

/** The dataset's index, opened on first use, and again when its search configuration changed. */
function index({ t, d, config }: Target): TextIndex {
  const wanted = JSON.stringify(config);
  const found = open.get(keyOf(t, d));
  if (found && found.config === wanted) return found.index;
  const g = generation(t, d);
  found?.index.close();
  const opened = new TextIndex(store, t, d, layout.textSnapshot(dataDir, t, d, g), config, segmentRecords).open();
  // what a crashed or cancelled reindex left: every generation but this one and one being built
  removeGenerations(dataDir, t, d, 'text', [g, ...(staging.has(keyOf(t, d)) ? [staging.get(keyOf(t, d))!.generation] : [])]);
  open.set(keyOf(t, d), { index: opened, config: wanted });
  return opened;
}

function staged({ t, d, generation: g }: Staged): TextIndex {
  const found = staging.get(keyOf(t, d));
  if (!found || found.generation !== g) throw new Error(`generation ${g} of the text index of '${d}' is not being built`);
  return found.index;
}

/**
 * The tombstones a snapshot made unnecessary, unless a new generation is being built: its sealed
 * snapshot may still hold those records, and after a crash it opens with only the tombstones to lose them.
 */
function kept(t: string, d: string, gone: number[]): number[] {
  return staging.has(keyOf(t, d)) ? [] : gone;
}


/** Writes every open index that changed; one that cannot be written does not keep the others from it. */
function snapshotAll(): { t: string; d: string; gone: number[]; error?: string }[] {
  const written = [];
  for (const { index: idx } of open.values()) {
    try {
      written.push({ t: idx.tenantId, d: idx.datasetId, gone: kept(idx.tenantId, idx.datasetId, idx.snapshot()) });
    } catch (err) {
      // its tombstones stay, and it is replayed from the store when next opened
      written.push({ t: idx.tenantId, d: idx.datasetId, gone: [], error: (err as Error).message });
    }
  }
  return written;
}

function handle(req: TextRequest): unknown {
  switch (req.op) {
    case 'add': {
      const idx = index(req.target);
      const started = Date.now();
      idx.add(req.records);
      payMerges(idx, Date.now() - started);
      return null;
    }
    case 'catchUp':
      return index(req.target).catchUp();
    case 'search':
      return index(req.target).search(req.text, req.options);
    case 'remove': // a closed index loses them through their tombstones when it opens
      staging.get(keyOf(req.target.t, req.target.d))?.index.remove(req.seqs);
      return open.get(keyOf(req.target.t, req.target.d))?.index.remove(req.seqs);
    case 'snapshot': // of an open index only: a dataset deleted meanwhile is not brought back
      return kept(req.target.t, req.target.d, open.get(keyOf(req.target.t, req.target.d))?.index.snapshot() ?? []);
    case 'snapshotAll':
      return snapshotAll();
    case 'forget':
      for (const map of [open, staging]) {
        for (const [key, { index: idx }] of map) {
          if (idx.tenantId !== req.t || (req.d !== undefined && idx.datasetId !== req.d)) continue;
          idx.close();
          map.delete(key);
        }
      }
      return null;
    case 'stage': {
      const { t, d, config } = req.target;
      const fresh = new TextIndex(store, t, d, layout.textSnapshot(dataDir, t, d, req.generation), config, segmentRecords);
      fresh.destroy(); // what a crashed attempt left
      staging.get(keyOf(t, d))?.index.close();
      staging.set(keyOf(t, d), { index: fresh, config: JSON.stringify(config), generation: req.generation });
      return null;
    }
    case 'fill':
      return staged(req.staged).fill(req.upto, req.limit);
    case 'seal':
      return void staged(req.staged).snapshot(true);
    case 'discard': {
      const { t, d, generation: g } = req.staged;
      const building = staging.get(keyOf(t, d));
      if (building?.generation === g) staging.delete(keyOf(t, d));
      building?.index.close();
      return removeTextFiles(layout.textSnapshot(dataDir, t, d, g));
    }
    case 'promote': {
      const { t, d } = req.target;
      const built = staging.get(keyOf(t, d));
      staging.delete(keyOf(t, d));
      open.get(keyOf(t, d))?.index.close();
      open.delete(keyOf(t, d));
      if (built?.generation === req.generation) {
        built.index.catchUp(); // what was committed since its last fill
        open.set(keyOf(t, d), { index: built.index, config: built.config });
      } // else (a restart since it was built) it opens from its snapshot on first use
      removeGenerations(dataDir, t, d, 'text', [req.generation]);
      return null;
    }
  }
}

/**
 * An add is followed by as long again of its index's merges, when it has any to do: merges between
 * messages alone starve while adds keep the worker busy (a long ingest ended with 140 segments
 * where 14 were due), and each segment more costs every search. Ingest slows by at most half.
 */
function payMerges(idx: TextIndex, spentMs: number): void {
  mergeSlice(idx, Date.now() + Math.min(spentMs, PAID_MERGE_MAX_MS));
}

/** `idx`'s merges until `until`; answers whether more are due. One that fails is reported, and tried again later. */
function mergeSlice(idx: TextIndex, until: number): boolean {
  try {
    return idx.mergeStep(until);
  } catch (err) {
    parentPort!.postMessage({ problem: 'text_merge_failed', error: (err as Error).message, t: idx.tenantId, d: idx.datasetId } satisfies TextReply);
    return false;
  }
}

/**
 * Merges run between messages, a slice at a time, so that a search waits at most one slice for
 * them. A merge that fails (a full disk) leaves the old segments serving; it is tried again later.
 */
let merging: NodeJS.Immediate | null = null;
function mergeSoon(): void {
  merging ??= setImmediate(() => {
    merging = null;
    let more = false;
    for (const map of [open, staging]) {
      for (const { index: idx } of map.values()) {
        more = mergeSlice(idx, Date.now() + MERGE_SLICE_MS) || more;
        if (more) return mergeSoon();
      }
    }
  });
}

parentPort!.on('message', ({ id, req }: { id: number; req: TextRequest }) => {
  mergeSoon();
  try {
    const value = handle(req);
    const transfer = req.op === 'search' ? [(value as TextResult).seqs.buffer, (value as TextResult).scores.buffer] : [];
    parentPort!.postMessage({ id, value } satisfies TextReply, transfer as ArrayBuffer[]);
  } catch (err) {
    // the store is the truth: an index that failed to change is dropped, and rebuilt from it on next use;
    // one whose snapshot could not be written (a full disk) is whole, and stays as it is, changed
    if ('target' in req && req.op !== 'search' && req.op !== 'snapshot') {
      open.get(keyOf(req.target.t, req.target.d))?.index.close();
      open.delete(keyOf(req.target.t, req.target.d));
    }
    const code = (err as NodeJS.ErrnoException).code;
    parentPort!.postMessage({ id, error: (err as Error).message, code, ...(err instanceof ScoringTimeout && { timeout: true as const }) } satisfies TextReply);
  }
});
