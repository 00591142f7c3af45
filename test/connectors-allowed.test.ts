import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { directoryRefusal } from '../src/engine/connectors/directory/allowed.js';
import { tempDir } from './helpers/cli.js';

describe('where a directory connector may read', () => {
  const dir = tempDir('svc-allowed-');
  const dataDir = join(dir.path, 'data');
  const logs = join(dir.path, 'logs');
  const other = join(dir.path, 'other');
  for (const d of [dataDir, join(dataDir, 'blobs'), logs, join(logs, 'app'), other]) mkdirSync(d, { recursive: true });
  symlinkSync(dataDir, join(logs, 'sneaky'));
  afterAll(() => dir.remove());

  it('never the data dir, a directory inside it, one holding it, or a symlink to it', () => {
    for (const path of [dataDir, join(dataDir, 'blobs'), dir.path, join(logs, 'sneaky')]) {
      expect(directoryRefusal(path, { dataDir, roots: [] }), path).toMatch(/data dir/);
    }
  });

  it('anywhere else without roots; only under them with roots', () => {
    expect(directoryRefusal(other, { dataDir, roots: [] })).toBeNull();
    expect(directoryRefusal(join(logs, 'app'), { dataDir, roots: [logs] })).toBeNull();
    expect(directoryRefusal(logs, { dataDir, roots: [logs] })).toBeNull();
    expect(directoryRefusal(other, { dataDir, roots: [logs] })).toMatch(/SVC_CONNECTOR_DIRECTORY_ROOTS/);
    expect(directoryRefusal(join(logs, '..', 'other'), { dataDir, roots: [logs] })).toMatch(/outside/);
  });
});
