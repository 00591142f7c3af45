import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { configFromEnv, mapSizeFromEnv, withOverrides } from '../src/engine/config.js';
import { DEFAULT_EMBEDDINGS_FILE } from '../src/engine/vector/embedders/wordVectors.js';

const DEFAULTS = {
  store: { mapSize: undefined },
  disk: { minFreeBytes: undefined, minFreePercent: undefined },
  search: { timeoutMs: 10_000, maxAnswerRecords: LIMITS.viewRecords },
  text: { segmentRecords: 50_000 },
  sql: { timeoutMs: 30_000, memoryLimit: '512MB', threads: availableParallelism(), tempLimit: '8GB', maxResultRows: 100_000 },
  exports: { retentionDays: 7, urlSeconds: 3600, sqlTimeoutFactor: 10, parquetMemory: '256MB', batchPauseMs: 0 },
  uploads: { partBytes: 64 * 2 ** 20, partNumbers: 10_000, objectBytes: 10 * 2 ** 30, sessionSeconds: 24 * 3600, sweepSeconds: 600, urlSeconds: 3600 },
  ingest: { maxDecompressedBytes: 10 * 2 ** 30 },
  semantic: { embedder: { provider: 'builtin' }, embeddingsFile: DEFAULT_EMBEDDINGS_FILE, retryBaseMs: 2000 },
  connectors: { directoryRoots: [] },
  crashAt: null,
};

describe('the engine configuration from the environment', () => {
  it('has the documented defaults when nothing is set', () => {
    expect(JSON.parse(JSON.stringify(configFromEnv({})))).toEqual(JSON.parse(JSON.stringify(DEFAULTS)));
  });

  it('reads every SVC_* setting of the engine', () => {
    const config = configFromEnv({
      SVC_LMDB_MAP_SIZE: '64g',
      SVC_MIN_FREE_BYTES: '512m',
      SVC_MIN_FREE_PERCENT: '2.5',
      SVC_SEARCH_TIMEOUT_MS: '1500.5',
      SVC_VIEW_MAX_RECORDS: '150.7',
      SVC_TEXT_SEGMENT_RECORDS: '500',
      SVC_SQL_TIMEOUT_MS: '1500',
      SVC_SQL_MEMORY_LIMIT: '256MB',
      SVC_SQL_THREADS: '3',
      SVC_SQL_TEMP_LIMIT: '1GB',
      SVC_SQL_MAX_RESULT_ROWS: '300',
      SVC_EXPORT_RETENTION_DAYS: '0.5',
      SVC_EXPORT_URL_SECONDS: '60',
      SVC_EXPORT_SQL_TIMEOUT_FACTOR: '2',
      SVC_EXPORT_MEMORY_LIMIT: '1MB',
      SVC_EXPORT_BATCH_PAUSE_MS: '400',
      SVC_UPLOAD_PART_MAX_BYTES: '1024',
      SVC_UPLOAD_SESSION_SECONDS: '2',
      SVC_UPLOAD_SWEEP_SECONDS: '1',
      SVC_INGEST_MAX_DECOMPRESSED_BYTES: '4096',
      SVC_EMBEDDER: 'openai',
      SVC_EMBEDDER_URL: 'http://x',
      SVC_EMBEDDER_MODEL: 'm',
      SVC_EMBEDDER_API_KEY: 'k',
      SVC_EMBEDDINGS_FILE: '/tmp/words.bin',
      SVC_EMBED_RETRY_MS: '0',
      SVC_CRASH_AT: 'reindex:promote',
      SVC_CONNECTOR_DIRECTORY_ROOTS: '/var/log:/srv/logs',
    });
    expect(config).toEqual({
      store: { mapSize: 64 * 2 ** 30 },
      disk: { minFreeBytes: 512 * 2 ** 20, minFreePercent: 2.5 },
      search: { timeoutMs: 1500.5, maxAnswerRecords: 150 },
      text: { segmentRecords: 500 },
      sql: { timeoutMs: 1500, memoryLimit: '256MB', threads: 3, tempLimit: '1GB', maxResultRows: 300 },
      exports: { retentionDays: 0.5, urlSeconds: 60, sqlTimeoutFactor: 2, parquetMemory: '1MB', batchPauseMs: 400 },
      uploads: { ...DEFAULTS.uploads, partBytes: 1024, sessionSeconds: 2, sweepSeconds: 1 },
      ingest: { maxDecompressedBytes: 4096 },
      semantic: { embedder: { provider: 'openai', url: 'http://x', model: 'm', api_key: 'k' }, embeddingsFile: '/tmp/words.bin', retryBaseMs: 0 },
      connectors: { directoryRoots: ['/var/log', '/srv/logs'] },
      crashAt: 'reindex:promote',
    });
  });

  it('takes a value that is empty, zero, negative or not a number as unset, as before', () => {
    for (const bad of ['', '0', '-5', 'lots']) {
      const config = configFromEnv({
        SVC_SEARCH_TIMEOUT_MS: bad,
        SVC_VIEW_MAX_RECORDS: bad,
        SVC_SQL_TIMEOUT_MS: bad,
        SVC_SQL_THREADS: bad,
        SVC_SQL_MAX_RESULT_ROWS: bad,
        SVC_EXPORT_RETENTION_DAYS: bad,
        SVC_EXPORT_URL_SECONDS: bad,
        SVC_UPLOAD_PART_MAX_BYTES: bad,
        SVC_UPLOAD_SESSION_SECONDS: bad,
        SVC_UPLOAD_SWEEP_SECONDS: bad,
        SVC_SQL_MEMORY_LIMIT: '',
        SVC_EXPORT_MEMORY_LIMIT: '',
        SVC_EMBEDDER: '',
        SVC_LMDB_MAP_SIZE: bad,
      });
      expect(config.search, bad).toEqual(DEFAULTS.search);
      expect(config.sql, bad).toEqual(DEFAULTS.sql);
      expect(config.exports, bad).toEqual(DEFAULTS.exports);
      expect(config.uploads, bad).toEqual(DEFAULTS.uploads);
      expect(config.semantic.embedder, bad).toEqual({ provider: 'builtin' });
      expect(config.store.mapSize, bad).toBeUndefined();
    }
    // the floor: 0 is a setting (off), anything else not a size is unset
    expect(configFromEnv({ SVC_MIN_FREE_BYTES: '0', SVC_MIN_FREE_PERCENT: '0' }).disk).toEqual({ minFreeBytes: 0, minFreePercent: 0 });
    expect(configFromEnv({ SVC_MIN_FREE_BYTES: 'lots', SVC_MIN_FREE_PERCENT: '-1' }).disk).toEqual({ minFreeBytes: undefined, minFreePercent: undefined });
    // uploads never took Infinity
    expect(configFromEnv({ SVC_UPLOAD_PART_MAX_BYTES: 'Infinity' }).uploads.partBytes).toBe(DEFAULTS.uploads.partBytes);
    // the retry delay: 0 retries at once; what is not a number of 0 or more is the default
    for (const bad of ['', 'soon', '-1']) expect(configFromEnv({ SVC_EMBED_RETRY_MS: bad }).semantic.retryBaseMs, bad).toBe(2000);
  });

  it('refuses an embedder it does not know', () => {
    expect(() => configFromEnv({ SVC_EMBEDDER: 'magic' })).toThrow(/SVC_EMBEDDER must be builtin, openai or onnx, not 'magic'/);
  });

  it('reads the map size alone for a command that opens only the store', () => {
    expect([mapSizeFromEnv({}), mapSizeFromEnv({ SVC_LMDB_MAP_SIZE: '3m' }), mapSizeFromEnv({ SVC_LMDB_MAP_SIZE: '0' })]).toEqual([undefined, 3 * 2 ** 20, undefined]);
  });

  it('lets an open name its own store cap and floor', () => {
    const base = configFromEnv({ SVC_LMDB_MAP_SIZE: '1g', SVC_MIN_FREE_BYTES: '1g', SVC_MIN_FREE_PERCENT: '5' });
    expect(withOverrides(base, {})).toMatchObject({ store: { mapSize: 2 ** 30 }, disk: { minFreeBytes: 2 ** 30, minFreePercent: 5 } });
    const own = withOverrides(base, { mapSize: 2 ** 20, minFreeBytes: 0 });
    expect(own).toMatchObject({ store: { mapSize: 2 ** 20 }, disk: { minFreeBytes: 0, minFreePercent: 5 } });
    expect(own.sql).toBe(base.sql);
    expect(base.disk.minFreeBytes).toBe(2 ** 30);
  });
});
