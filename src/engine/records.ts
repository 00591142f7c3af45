/** A record as stored in LMDB: the truth every index is derived from. */
export interface StoredRecord {
  id: string;
  seq: number;
  title: string | null;
  body: string;
  /** ISO 8601 UTC, from the record's time field, or a text line's own time; null when it has none. */
  time: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  /** key of the source feeding the dataset (part of a derived id) */
  source_key: string;
  /** where the source object lives: blobs/<tenant>/<bucket>/<key> */
  bucket: string;
  key: string;
  etag: string;
  /** 1-based line of the source object the record starts on. */
  line: number;
  transform_version: number;
  /**
   * The input fields title, body and time were read from, when named otherwise (`Content` for a
   * Loghub CSV's body, `message` for a log line's): the record answers to those names too, in
   * `where`, `q`, sort, aggregations, the fields it shows and SQL. Records of transform version 1 lack it.
   */
  names?: RecordNames;
  /** seq of the record with the same id that this one replaced. */
  replaces?: number;
  /** written by a reindex's re-parse: a line read again, not new data (detections do not evaluate it) */
  reparsed?: boolean;
}

/** A record before the store assigns its sequence. */
export type NewRecord = Omit<StoredRecord, 'seq' | 'replaces' | 'reparsed' | 'created_at' | 'key'>;

/**
 * The record a batch commits: written member by member, so every record has one object shape (a
 * spread of `rec` cost about 3 µs a record, a third of a batch commit's own time).
 */
export function storedRecord(rec: NewRecord, key: string, seq: number, createdAt: string): StoredRecord {
  const stored: StoredRecord = {
    id: rec.id, seq, title: rec.title, body: rec.body, time: rec.time, metadata: rec.metadata, created_at: createdAt,
    source_key: rec.source_key, bucket: rec.bucket, key, etag: rec.etag, line: rec.line, transform_version: rec.transform_version,
  };
  if (rec.names !== undefined) stored.names = rec.names;
  return stored;
}

/** One item out of a parser: a value with its line, or the reason the line was refused. */
export type ParsedItem =
  | { line: number; value: unknown }
  | { line: number; error: string };

export type IngestFormat = 'text' | 'ndjson' | 'json' | 'csv';
export const INGEST_FORMATS: IngestFormat[] = ['text', 'ndjson', 'json', 'csv'];

/** Which input fields become id, title, body and time; the rest goes to metadata. */
export interface TransformConfig {
  id_field?: string | null;
  title_field?: string | null;
  body_field?: string | null;
  time_field?: string | null;
  /** how a text line's time is read: parse_config.time_format (see ingest/lineTime.ts) */
  time_format?: string | null;
  rename?: Record<string, string>;
  drop?: string[];
}

/** The input field each of title, body and time came from, present only when it is not named so itself. */
export interface RecordNames { title?: string; body?: string; time?: string }

/**
 * What the transform makes of a record: 2 keeps the names of the fields title, body and time came
 * from (`names`), and CSV columns have one type per object. A reindex parses again every object
 * whose run an earlier version made.
 */
export const TRANSFORM_VERSION = 2;
