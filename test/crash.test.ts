import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../src/engine/index.js';
import { lineIds } from '../src/engine/ingest/transform.js';
import { openStore } from '../src/engine/store/db.js';
import { ROOT, init, svc, tempDir } from './helpers/cli.js';

const LINES = 150_000;
const CHILD = join(ROOT, 'test/helpers/ingest-child.mjs');
const lineText = (n: number) => `2026-11-22T07:00:00Z INFO worker-${n % 17} processed marker${String(n).padStart(7, '0')} block blk_${n * 7919} in ${n % 997} ms`;

interface ChildResult { acked: number; runId?: string; done: boolean }

/** Runs the ingest child; kills it with SIGKILL `killAfterMs` after its first acknowledged batch (never when undefined). */
function runChild(args: string[], killAfterMs?: number): Promise<ChildResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const result: ChildResult = { acked: 0, done: false };
    let buffer = '';
    let armed = false;
    child.stdout!.on('data', (chunk) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        const [word, value] = line.split(' ');
        if (word === 'RUN') result.runId = value;
        if (word === 'ACK') result.acked = Number(value);
        if (word === 'DONE') result.done = true;
        if (word === 'ACK' && result.acked > 0 && killAfterMs !== undefined && !armed) {
          armed = true;
          setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }
    });
    child.on('exit', () => resolve(result));
  });
}

describe('a kill -9 during ingestion', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  const file = join(dir.path, 'big.log');
  let tenantId = '';

  beforeAll(async () => {
    tenantId = init(dataDir).tenant_id;
    expect(svc(['datasets', 'create', 'big'], { dataDir }).status).toBe(0);
    const out = createWriteStream(file);
    for (let n = 1; n <= LINES; n++) out.write(lineText(n) + (n < LINES ? '\n' : ''));
    await new Promise((ok) => out.end(ok));
  });
  afterAll(() => dir.remove());

  /** Every line up to `acked` has its record; no record beyond the file exists. */
  async function checkAcknowledged(acked: number) {
    const store = openStore(dataDir);
    try {
      const [run] = [...store.meta.getRange({ start: [tenantId, 'run'], end: [tenantId, 'run', '\uffff'] })].map((e) => e.value);
      const ds = store.meta.get([tenantId, 'dataset', 'big']);
      expect(ds.record_count).toBeGreaterThanOrEqual(acked);
      expect(ds.record_count).toBeLessThanOrEqual(LINES);
      expect(ds.ordered_ids).toBe(true);
      const lineId = lineIds('big', run.etag, true);
      for (let line = 1; line <= acked; line += Math.max(1, Math.floor(acked / 2000))) {
        const seq = store.ids.get([tenantId, 'big', lineId(line)]);
        expect(seq, `line ${line} acknowledged but missing`).toBeDefined();
        expect(store.records.get([tenantId, 'big', seq!])!.line).toBe(line);
      }
      if (acked > 0) expect(store.ids.get([tenantId, 'big', lineId(acked)])).toBeDefined();
    } finally {
      await store.close();
    }
  }

  it('keeps every acknowledged batch, and a re-run ends with every line exactly once', async () => {
    const first = await runChild([dataDir, 'big', file], 150);
    expect(first.runId).toBeDefined();
    expect(first.done).toBe(false);
    await checkAcknowledged(first.acked);

    let acked = first.acked;
    for (const killAfter of [50, 400, 900]) {
      const resumed = await runChild([dataDir, 'big'], killAfter);
      if (resumed.done) break;
      expect(resumed.acked).toBeGreaterThanOrEqual(acked);
      acked = resumed.acked;
      await checkAcknowledged(acked);
    }
    const last = await runChild([dataDir, 'big']);
    expect(last.done).toBe(true);
    expect(last.acked).toBe(LINES);

    const engine = await Engine.open(dataDir);
    try {
      const caller = engine.localCaller();
      const run = engine.ingest.list(caller, { dataset_id: 'big' })[0];
      expect(run.status).toBe('ready');
      expect(run.documents.parsed).toBe(LINES);
      expect(engine.datasets.get(caller, 'big').record_count).toBe(LINES);
      const everything = await engine.search.run(caller, { datasets: ['big'], limit: 1 });
      expect(everything.total.value).toBe(LINES);
      for (const n of [1, 2, 1999, 2000, 2001, 75_000, LINES - 1, LINES]) {
        const hit = await engine.search.run(caller, { text: `marker${String(n).padStart(7, '0')}`, datasets: ['big'], max_expansion_terms: 0 });
        expect(hit.total.value, `line ${n} in the text index`).toBe(1);
        expect(hit.records[0].provenance.line).toBe(n);
        expect(hit.records[0].body).toBe(lineText(n));
      }
      const common = await engine.search.run(caller, { text: 'processed', datasets: ['big'], limit: 1 });
      expect(common.total.value).toBe(LINES);
    } finally {
      await engine.close();
    }
  }, 300_000);
});
