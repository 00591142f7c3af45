import * as crypto from 'node:crypto';
import { type IngestFormat, type NewRecord, type RecordNames, type TransformConfig, TRANSFORM_VERSION } from '../records.js';
import { makeLineTime } from './lineTime.js';

export interface TransformContext {
  source_key: string;
  bucket: string;
  etag: string;
  format: IngestFormat;
  /** when the object was ingested (epoch ms; default now): a text line's time without a year is read near it */
  ingested_at?: number;
  /** the dataset's derived ids sort in line order (see `lineIds`) */
  ordered_ids?: boolean;
}

export type Transform = (value: unknown, line: number) => NewRecord | { error: string };

const BODY_KEYS = ['body', 'text', 'message', 'msg', 'content', 'log'];
const TIME_KEYS = ['timestamp', '@timestamp', 'time', 'ts'];

/** The id of each line of one object whose records name none. */
export type LineIds = (line: number) => string;

/**
 * Ids of the records an object's lines make when their input names none: the same object, version
 * and line always give the same id. Ordered (a dataset made since svc had them): 16 hex digits of
 * the object's hash, then the line in hex, 8 digits up to line 2^32 — an object's ids follow one
 * another, so storing them touches a few pages of the id index, not every page (a hash per line
 * put each new id anywhere). A dataset made before keeps hashed ids, so an object ingested again
 * still finds its records.
 */
export function lineIds(sourceKey: string, etag: string, ordered: boolean): LineIds {
  if (!ordered) return (line) => sha256Hex(JSON.stringify([sourceKey, etag, line])).slice(0, 24);
  const object = sha256Hex(JSON.stringify([sourceKey, etag])).slice(0, 16);
  return (line) => object + line.toString(16).padStart(8, '0');
}

// The one-shot crypto.hash (Node >= 20.12) is about twice as fast as createHash, and text ingestion hashes every line.
const sha256Hex: (s: string) => string =
  typeof crypto.hash === 'function' ? (s) => crypto.hash('sha256', s, 'hex') : (s) => crypto.createHash('sha256').update(s).digest('hex');

/** Maps a parsed value to a record: config names the fields, defaults cover the common shapes. */
export function makeTransform(cfg: TransformConfig, ctx: TransformContext): Transform {
  const rename = cfg.rename ?? {};
  const drop = new Set(cfg.drop ?? []);
  const reshape = Object.keys(rename).length > 0 || drop.size > 0;
  const idField = cfg.id_field || null;
  const titleField = cfg.title_field || 'title';
  const bodyField = cfg.body_field || null;
  const timeField = cfg.time_field || null;
  const { source_key, bucket, etag } = ctx;
  const lineTime = makeLineTime(cfg.time_format, ctx.ingested_at ?? Date.now());
  const lineId = lineIds(source_key, etag, ctx.ordered_ids === true);

  const record = (id: string, title: string | null, body: string, time: string | null, metadata: Record<string, unknown>, line: number, names?: RecordNames): NewRecord => ({
    id, title, body, time, metadata, source_key, bucket, etag, line, transform_version: TRANSFORM_VERSION, ...(names && { names }),
  });

  return (value, line) => {
    // Field settings have nothing to name in a plain line, so text lines always get derived ids; the time is the line's own.
    if (typeof value === 'string') {
      const level = logLevel(value);
      return record(lineId(line), null, value, lineTime(value), level ? { level } : {}, line);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'expected a JSON object' };
    const obj = reshape ? reshapeFields(value as Record<string, unknown>, rename, drop) : (value as Record<string, unknown>);
    const used = new Set<string>();

    let id: string;
    if (idField) {
      const v = obj[idField];
      if (v === undefined || v === null || v === '') return { error: `missing id field '${idField}'` };
      if (typeof v !== 'string' && typeof v !== 'number') return { error: `id field '${idField}' must be a string or number` };
      id = String(v);
      used.add(idField);
    } else {
      const key = ['id', '_id'].find((k) => isIdValue(obj[k]));
      id = key ? String(obj[key]) : lineId(line);
      if (key) used.add(key);
    }

    let title: string | null = null;
    if (typeof obj[titleField] === 'string') {
      title = obj[titleField] as string;
      used.add(titleField);
    }

    const bodyKey = bodyField ? (present(obj[bodyField]) ? bodyField : null) : firstKey(obj, BODY_KEYS, true);
    let body: string;
    if (bodyKey !== null) {
      body = asText(obj[bodyKey]);
      used.add(bodyKey);
    } else {
      body = JSON.stringify(obj);
    }

    let time: string | null = null;
    const timeKey = timeField ? (present(obj[timeField]) ? timeField : null) : firstKey(obj, TIME_KEYS, false);
    if (timeKey !== null) {
      time = toIsoTime(obj[timeKey]);
      // An unreadable time stays in metadata so nothing is lost.
      if (time !== null) used.add(timeKey);
    }

    const metadata: Record<string, unknown> = {};
    for (const key of Object.keys(obj)) if (!used.has(key)) setField(metadata, key, obj[key]);
    // the record answers to the names its title, body and time had in the input
    let names: RecordNames | undefined;
    if (title !== null && titleField !== 'title') (names ??= {}).title = titleField;
    if (bodyKey !== null && bodyKey !== 'body') (names ??= {}).body = bodyKey;
    if (time !== null && timeKey !== null && timeKey !== 'time') (names ??= {}).time = timeKey;
    return record(id, title, body, time, metadata, line, names);
  };
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function isIdValue(v: unknown): v is string | number {
  return (typeof v === 'string' && v !== '') || (typeof v === 'number' && Number.isFinite(v));
}

function asText(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The record's key for the earliest-listed candidate present in it. */
function firstKey(obj: Record<string, unknown>, candidates: string[], anyCase: boolean): string | null {
  let best: string | null = null;
  let bestRank = candidates.length;
  for (const key of Object.keys(obj)) {
    const rank = candidates.indexOf(anyCase ? key.toLowerCase() : key);
    if (rank !== -1 && rank < bestRank && present(obj[key])) {
      best = key;
      bestRank = rank;
    }
  }
  return best;
}

/** Applies renames and drops; a drop names a field by its old or its new name, and a renamed field wins over one already so named. */
function reshapeFields(obj: Record<string, unknown>, rename: Record<string, string>, drop: Set<string>): Record<string, unknown> {
  const targets = new Set<string>();
  for (const [from, to] of Object.entries(rename)) if (Object.hasOwn(obj, from) && from !== to) targets.add(to);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    const to = Object.hasOwn(rename, key) ? rename[key] : key;
    if (drop.has(key) || drop.has(to)) continue;
    if (to === key && targets.has(key)) continue;
    setField(out, to, obj[key]);
  }
  return out;
}

function setField(obj: Record<string, unknown>, key: string, value: unknown): void {
  // A field named __proto__ must stay data, not become the prototype.
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

// Upper-case level words stand alone; any case counts inside brackets, as in Apache's `[error]`.
// Matching case-insensitively and re-checking the bare word keeps this one regex.
const LEVEL = /\[(trace|debug|info|notice|warn(?:ing)?|error|fatal|critical|severe)\]|\b(TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|FATAL|CRITICAL|SEVERE)\b/gi;

/** The first log level named in a line, upper-cased, WARNING as WARN; null when none. */
export function logLevel(text: string): string | null {
  LEVEL.lastIndex = 0;
  for (let m = LEVEL.exec(text); m !== null; m = LEVEL.exec(text)) {
    const word = m[1] ?? m[2];
    if (m[1] === undefined && word !== word.toUpperCase()) continue;
    const level = word.toUpperCase();
    return level === 'WARNING' ? 'WARN' : level;
  }
  return null;
}

const EPOCH_TEXT = /^-?\d+(?:\.\d+)?$/;
// Date.parse reads a date-time without a zone as local time; records are read as UTC instead.
const ZONELESS = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)$/;

/** ISO 8601 UTC for an epoch number (seconds below 1e11, else ms) or a date string; null when unreadable. */
export function toIsoTime(v: unknown): string | null {
  let ms: number;
  if (typeof v === 'number') {
    ms = epochMs(v);
  } else if (typeof v === 'string') {
    const s = v.trim();
    const zoneless = ZONELESS.exec(s);
    if (EPOCH_TEXT.test(s)) ms = epochMs(Number(s));
    else if (zoneless) ms = Date.parse(`${zoneless[1]}T${zoneless[2].replace(',', '.')}Z`);
    else ms = Date.parse(s);
  } else {
    return null;
  }
  if (!Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function epochMs(n: number): number {
  return Math.abs(n) < 1e11 ? n * 1000 : n;
}
