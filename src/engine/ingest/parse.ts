import type { IngestFormat, ParsedItem } from '../records.js';
import { parseCsv, type CsvInput } from './parsers/csv.js';
import { parseJson } from './parsers/json.js';
import { parseNdjson } from './parsers/ndjson.js';
import { parseText } from './parsers/text.js';

const PARSERS: Record<IngestFormat, (input: CsvInput) => AsyncGenerator<ParsedItem>> = {
  text: (input) => parseText(once(input)),
  ndjson: (input) => parseNdjson(once(input)),
  json: (input) => parseJson(once(input)),
  csv: parseCsv,
};

const once = (input: CsvInput): AsyncIterable<Buffer> => (typeof input === 'function' ? input() : input);

/**
 * Items of one source object, in order, each tagged with the line it starts on. `input` is the
 * object's bytes, or a function that opens them: CSV reads such an object twice, the first time to
 * type its columns.
 */
export function parseObject(input: CsvInput, format: IngestFormat): AsyncGenerator<ParsedItem> {
  const parser = PARSERS[format];
  if (!parser) throw new Error(`unknown ingest format '${String(format)}'`);
  return parser(input);
}
