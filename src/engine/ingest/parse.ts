import type { IngestFormat, ParsedItem } from '../records.js';
import { parseCsv } from './parsers/csv.js';
import { parseJson } from './parsers/json.js';
import { parseNdjson } from './parsers/ndjson.js';
import { parseText } from './parsers/text.js';

const PARSERS: Record<IngestFormat, (input: AsyncIterable<Buffer>) => AsyncGenerator<ParsedItem>> = {
  text: parseText,
  ndjson: parseNdjson,
  json: parseJson,
  csv: parseCsv,
};

/** Items of one source object, in order, each tagged with the line it starts on. */
export function parseObject(input: AsyncIterable<Buffer>, format: IngestFormat): AsyncGenerator<ParsedItem> {
  const parser = PARSERS[format];
  if (!parser) throw new Error(`unknown ingest format '${String(format)}'`);
  return parser(input);
}
