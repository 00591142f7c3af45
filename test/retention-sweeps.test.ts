/**
 * The upkeep that runs with each retention pass: the temp files killed writers left are swept
 * (a server is not reopened to do it), and a sweep that fails never keeps the others or the next
 * pass from running.
 */
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { TEMP_FILE_MAX_AGE_MS } from '../src/engine/blobs/tempFiles.js';
import { newId } from '../src/engine/ids.js';
import { Engine } from '../src/engine/index.js';
import { SYSTEM } from '../src/engine/store/db.js';
import { init, tempDir } from './helpers/cli.js';

let dir: ReturnType<typeof tempDir>;
let engine: Engine;

beforeAll(async () => {
  dir = tempDir('svc-retention-');
  init(dir.path);
  engine = await Engine.open(dir.path);
});

afterAll(async () => {
  await engine?.close();
  dir?.remove();
});

it('a failing sweep is logged; the others run, stale temp files go, and the next pass is scheduled', async () => {
  const tenant = engine.localCaller().tenant_id;
  const tmp = join(dir.path, 'blobs', tenant, '.tmp');
  mkdirSync(tmp, { recursive: true });
  const [stale, fresh] = [join(tmp, newId('tmp')), join(tmp, newId('tmp'))];
  writeFileSync(stale, 'left by a killed writer');
  writeFileSync(fresh, 'being written');
  const then = new Date(Date.now() - TEMP_FILE_MAX_AGE_MS - 60_000);
  utimesSync(stale, then, then);

  const ran: string[] = [];
  engine.retention.sweeps.unshift(async () => {
    ran.push('failing');
    throw new Error('a sweep that fails');
  });
  engine.retention.sweeps.push(async () => void ran.push('last'));
  const lines: string[] = [];
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
  try {
    await engine.retention.run();
  } finally {
    stderr.mockRestore();
  }
  expect(ran).toEqual(['failing', 'last']);
  const logged = lines.map((line) => JSON.parse(line));
  expect(logged).toEqual([expect.objectContaining({ event: 'retention_sweep_failed', error: 'a sweep that fails' })]);
  expect(existsSync(stale)).toBe(false);
  expect(existsSync(fresh)).toBe(true);
  expect(engine.jobs.list(SYSTEM, { type: 'retention', status: 'pending', limit: 5 })).toHaveLength(1);
});
