import type { HttpConfig } from '../../../api/connectors.js';
import { LIMITS } from '../../../api/limits.js';
import { TOO_DEEP } from '../../ingest/depth.js';
import { parseObject } from '../../ingest/parse.js';
import { isPlainObject } from '../../ingest/parsers/ndjson.js';
import { HttpSyncError } from './error.js';
import { resolveUrl } from './link.js';
import { deeperThan, valueAtPath } from './paths.js';

export type PageFormat = 'ndjson' | 'json' | 'csv';

export interface PageBody {
  records: Record<string, unknown>[];
  errors: { line: number; reason: string }[];
  /** the next page's URL named in a JSON body at next_link_path */
  nextLink?: string;
}

/** The config's format, else the Content-Type's, else NDJSON (the most forgiving of the three). */
export function pageFormat(config: HttpConfig, contentType: string | string[] | undefined): PageFormat {
  if (config.format) return config.format;
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0].trim().toLowerCase() ?? '';
  if (type.includes('ndjson') || type.includes('jsonl')) return 'ndjson';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type === 'text/csv') return 'csv';
  return 'ndjson';
}

/**
 * A page's records and the records that could not be read. NDJSON and CSV go through the
 * ingest parsers, so a line means what it means in an ingested file; a JSON body is parsed
 * whole (its next link may sit anywhere in it) and an error's line is the item's position.
 */
export async function readPageBody(body: Buffer, format: PageFormat, config: HttpConfig, url: string): Promise<PageBody> {
  if (format === 'json') return readJson(body, config, url);
  const page: PageBody = { records: [], errors: [] };
  for await (const item of parseObject(once(body), format)) {
    if ('error' in item) page.errors.push({ line: item.line, reason: item.error });
    else if (isPlainObject(item.value)) page.records.push(item.value);
    else page.errors.push({ line: item.line, reason: 'expected a JSON object' });
  }
  return page;
}

async function* once(body: Buffer): AsyncGenerator<Buffer> {
  yield body;
}

function readJson(body: Buffer, config: HttpConfig, url: string): PageBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (e) {
    // without the body's structure neither its records nor its next link can be found
    throw new HttpSyncError(`GET ${url}: the body is not valid JSON (${(e as Error).message})`, url);
  }
  const page: PageBody = { records: [], errors: [] };
  const at = config.records_path ? valueAtPath(parsed, config.records_path) : parsed;
  const items = Array.isArray(at) ? at : at === undefined || at === null ? [] : [at];
  items.forEach((item, i) => {
    if (!isPlainObject(item)) page.errors.push({ line: i + 1, reason: 'expected a JSON object' });
    else if (deeperThan(item, LIMITS.recordDepth)) page.errors.push({ line: i + 1, reason: TOO_DEEP });
    else page.records.push(item);
  });
  if (config.next_link_path) {
    const next = valueAtPath(parsed, config.next_link_path);
    if (typeof next === 'string' && next !== '') page.nextLink = resolveUrl(next, url);
  }
  return page;
}
