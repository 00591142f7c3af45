import { availableParallelism } from 'node:os';
import { LIMITS } from '../api/limits.js';
import { parseBytes, type FloorOptions } from './diskSpace.js';
import { positive } from './envNumber.js';
import type { ExportLimits } from './exports/limits.js';
import type { SearchLimits } from './search/search.js';
import type { SqlLimits } from './sql/limits.js';
import type { StoreOptions } from './store/db.js';
import type { IngestLimits } from './ingest/ingest.js';
import { MAX_OBJECT_BYTES } from './ingest/objectLimit.js';
import { uploadLimits, type UploadLimits } from './uploads/limits.js';
import type { EmbedderSettings } from './vector/embedders/embedder.js';
import { readModelDir } from './vector/embedders/onnx/modelDir.js';
import { DEFAULT_EMBEDDINGS_FILE } from './vector/embedders/wordVectors.js';
import type { SemanticConfig } from './vector/semantic.js';

/**
 * What an operator can set for the engine, resolved once by the entry point (`svc serve`, a local
 * command) and handed to `Engine.open`, which passes each part to the module it is for. Modules
 * read it where they use it, so a part changed on a running engine (a test) takes effect.
 */
export interface EngineConfig {
  /** the LMDB store (SVC_LMDB_MAP_SIZE) */
  store: StoreOptions;
  /** the free space ingest keeps (SVC_MIN_FREE_BYTES, SVC_MIN_FREE_PERCENT); unset: the default floor */
  disk: FloorOptions;
  /** a search's deadline and the ranking cap of views and exports (SVC_SEARCH_TIMEOUT_MS, SVC_VIEW_MAX_RECORDS) */
  search: SearchLimits;
  /** SVC_TEXT_SEGMENT_RECORDS: records a text index holds in memory before it seals them into a segment file */
  text: { segmentRecords: number };
  /** SVC_SQL_* */
  sql: SqlLimits;
  /** SVC_EXPORT_* */
  exports: ExportLimits;
  /** SVC_UPLOAD_PART_MAX_BYTES, SVC_UPLOAD_SESSION_SECONDS, SVC_UPLOAD_SWEEP_SECONDS */
  uploads: UploadLimits;
  /** SVC_INGEST_MAX_DECOMPRESSED_BYTES: most bytes a gzip object may decompress to (default: the 10 GiB object limit) */
  ingest: IngestLimits;
  /** SVC_EMBEDDER*, SVC_EMBEDDINGS_FILE, SVC_EMBED_RETRY_MS */
  semantic: SemanticConfig;
  /** SVC_CONNECTOR_DIRECTORY_ROOTS: the directories (colon-separated) directory connectors may read; unset: any */
  connectors: { directoryRoots: string[] };
  /** SVC_CRASH_AT: a named point where the process kills itself (crash tests); null in use */
  crashAt: string | null;
}

type Env = Record<string, string | undefined>;

/**
 * The engine's settings from the environment: the one place in the engine that reads `SVC_*`.
 * Each value is parsed and checked here; one that is unset, empty or not what it should be falls
 * back to its default, except SVC_EMBEDDER, which must name a provider (an Error says so).
 */
export function configFromEnv(env: Env = process.env): EngineConfig {
  return {
    store: { mapSize: mapSizeFromEnv(env) },
    disk: { minFreeBytes: parseBytes(env.SVC_MIN_FREE_BYTES), minFreePercent: nonNegative(env.SVC_MIN_FREE_PERCENT) },
    search: {
      timeoutMs: positive(env.SVC_SEARCH_TIMEOUT_MS, 10_000),
      maxAnswerRecords: Math.floor(positive(env.SVC_VIEW_MAX_RECORDS, LIMITS.viewRecords)),
    },
    text: { segmentRecords: Math.floor(positive(env.SVC_TEXT_SEGMENT_RECORDS, 50_000)) },
    sql: {
      timeoutMs: Math.floor(positive(env.SVC_SQL_TIMEOUT_MS, 30_000)),
      memoryLimit: env.SVC_SQL_MEMORY_LIMIT || '512MB',
      threads: Math.floor(positive(env.SVC_SQL_THREADS, availableParallelism())),
      tempLimit: env.SVC_SQL_TEMP_LIMIT || '8GB',
      maxResultRows: Math.floor(positive(env.SVC_SQL_MAX_RESULT_ROWS, 100_000)),
    },
    exports: {
      retentionDays: positive(env.SVC_EXPORT_RETENTION_DAYS, 7),
      urlSeconds: Math.floor(positive(env.SVC_EXPORT_URL_SECONDS, 3600)),
      sqlTimeoutFactor: positive(env.SVC_EXPORT_SQL_TIMEOUT_FACTOR, 10),
      parquetMemory: env.SVC_EXPORT_MEMORY_LIMIT || '256MB',
      batchPauseMs: Math.floor(positive(env.SVC_EXPORT_BATCH_PAUSE_MS, 0)),
    },
    uploads: uploadLimits({
      partBytes: finitePositive(env.SVC_UPLOAD_PART_MAX_BYTES, 64 * 2 ** 20),
      sessionSeconds: finitePositive(env.SVC_UPLOAD_SESSION_SECONDS, 24 * 3600),
      sweepSeconds: finitePositive(env.SVC_UPLOAD_SWEEP_SECONDS, 600),
    }),
    ingest: { maxDecompressedBytes: Math.ceil(finitePositive(env.SVC_INGEST_MAX_DECOMPRESSED_BYTES, MAX_OBJECT_BYTES)) },
    connectors: { directoryRoots: (env.SVC_CONNECTOR_DIRECTORY_ROOTS ?? '').split(':').filter((p) => p !== '') },
    semantic: {
      embedder: embedderFromEnv(env),
      embeddingsFile: env.SVC_EMBEDDINGS_FILE ?? DEFAULT_EMBEDDINGS_FILE,
      retryBaseMs: nonNegative(env.SVC_EMBED_RETRY_MS) ?? 2000,
    },
    crashAt: env.SVC_CRASH_AT || null,
  };
}

/**
 * SVC_LMDB_MAP_SIZE alone ("64g", bytes), for a command that reads the store without opening the
 * engine; undefined (unbounded) when unset, 0 or not a size.
 */
export function mapSizeFromEnv(env: Env = process.env): number | undefined {
  return parseBytes(env.SVC_LMDB_MAP_SIZE) || undefined;
}

/** `config` with the store and floor settings an `Engine.open` names itself (they win). */
export function withOverrides(config: EngineConfig, own: StoreOptions & FloorOptions): EngineConfig {
  return {
    ...config,
    store: { mapSize: own.mapSize ?? config.store.mapSize },
    disk: { minFreeBytes: own.minFreeBytes ?? config.disk.minFreeBytes, minFreePercent: own.minFreePercent ?? config.disk.minFreePercent },
  };
}

/**
 * The server-wide default embedder: SVC_EMBEDDER, SVC_EMBEDDER_URL, SVC_EMBEDDER_MODEL,
 * SVC_EMBEDDER_API_KEY, SVC_EMBEDDER_QUERY_PREFIX and SVC_EMBEDDER_DOCUMENT_PREFIX (kept as
 * given: `query: ` ends with its space). An onnx model directory must be there with its files, so
 * that `svc serve` fails at start, not at the first ingest.
 */
function embedderFromEnv(env: Env): EmbedderSettings {
  const provider = (env.SVC_EMBEDDER || 'builtin') as EmbedderSettings['provider'];
  if (!['builtin', 'openai', 'onnx'].includes(provider)) throw new Error(`SVC_EMBEDDER must be builtin, openai or onnx, not '${provider}'`);
  const model = env.SVC_EMBEDDER_MODEL || undefined;
  return {
    provider,
    url: env.SVC_EMBEDDER_URL || undefined,
    model,
    api_key: env.SVC_EMBEDDER_API_KEY || undefined,
    query_prefix: env.SVC_EMBEDDER_QUERY_PREFIX || undefined,
    document_prefix: env.SVC_EMBEDDER_DOCUMENT_PREFIX || undefined,
  };
}

/**
 * Throws when the server's default embedder is a local model that cannot be read: `svc serve`
 * checks it at start. A local command does not: it may never embed (listing datasets).
 */
export function checkEmbedder(config: EngineConfig): void {
  const { provider, model } = config.semantic.embedder;
  if (provider !== 'onnx') return;
  if (!model) throw new Error('SVC_EMBEDDER=onnx needs SVC_EMBEDDER_MODEL: the directory of a sentence-transformers ONNX export');
  readModelDir(model);
}

/** A finite number above 0, else the fallback. */
function finitePositive(text: string | undefined, fallback: number): number {
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** A finite number of 0 or more; undefined when unset, empty or anything else. */
function nonNegative(text: string | undefined): number | undefined {
  const n = text === undefined || text.trim() === '' ? NaN : Number(text);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
