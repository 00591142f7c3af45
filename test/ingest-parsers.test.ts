import { createReadStream, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DATA } from './helpers/cli.js';
import type { IngestFormat, ParsedItem } from '../src/engine/records.js';
import { MAX_LINE_BYTES, readLines } from '../src/engine/ingest/lines.js';
import { parseObject } from '../src/engine/ingest/parse.js';
import { csvCell } from '../src/engine/ingest/parsers/csv.js';

const FIX = new URL('../fixtures/', import.meta.url);
const LOGHUB = ['Apache', 'BGL', 'HDFS', 'Linux', 'OpenSSH', 'OpenStack'];

async function* chunked(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function collect<T>(gen: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of gen) out.push(item);
  return out;
}

function parseBuf(buf: Buffer | string, format: IngestFormat, size = 65536): Promise<ParsedItem[]> {
  return collect(parseObject(chunked(Buffer.from(buf), size), format));
}

function parseFile(path: string | URL, format: IngestFormat, highWaterMark = 4096): Promise<ParsedItem[]> {
  return collect(parseObject(createReadStream(path, { highWaterMark }), format));
}

const fixture = (name: string) => readFileSync(new URL(name, FIX));
const values = (items: ParsedItem[]) => items.map((i) => ('value' in i ? i.value : undefined));
const errors = (items: ParsedItem[]) => items.filter((i) => 'error' in i);

/** The file's lines as an independent reader sees them: split on LF, CR of a CRLF dropped. */
function fileLines(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

describe('readLines', () => {
  it('strips CR of CRLF, keeps numbering across blank lines, handles a missing final newline', async () => {
    const items = await collect(readLines(chunked(fixture('crlf-no-final-newline.log'), 5)));
    expect(items).toEqual([
      { line: 1, value: '081109 203615 148 INFO dfs.DataNode: first' },
      { line: 2, value: '' },
      { line: 3, value: '[Sun Dec 04 04:47:44 2005] [error] mod_jk child' },
      { line: 4, value: '   ' },
      { line: 5, value: 'last line, no newline' },
    ]);
  });

  it('does not invent a line after a final newline, and strips only one CR', async () => {
    expect(await collect(readLines(chunked(Buffer.from('a\r\r\nb\n'), 3)))).toEqual([
      { line: 1, value: 'a\r' },
      { line: 2, value: 'b' },
    ]);
    expect(await collect(readLines(chunked(Buffer.from('\n'), 1)))).toEqual([{ line: 1, value: '' }]);
  });

  it('drops a BOM opening the input but keeps U+FEFF elsewhere', async () => {
    const buf = Buffer.from('\uFEFFfirst\n\uFEFFsecond');
    for (const size of [1, 2, 64]) {
      expect(await collect(readLines(chunked(buf, size)))).toEqual([
        { line: 1, value: 'first' },
        { line: 2, value: '\uFEFFsecond' },
      ]);
    }
  });

  it('refuses a line that is not UTF-8 and goes on', async () => {
    const items = await collect(readLines(createReadStream(new URL('bad-utf8.log', FIX))));
    expect(items).toEqual([
      { line: 1, value: 'café ok' },
      { line: 2, error: 'invalid UTF-8' },
      { line: 3, error: 'invalid UTF-8' },
      { line: 4, value: 'fine again' },
    ]);
  });

  it('refuses a line over 1 MiB and resumes at the next line, in any chunking', async () => {
    const long = 'x'.repeat(MAX_LINE_BYTES + 1);
    const exact = 'y'.repeat(MAX_LINE_BYTES);
    const buf = Buffer.from(`short\n${long}\r\n${exact}\r\nafter\n${long}`);
    for (const size of [65536, 7 * 1024 + 3, buf.length]) {
      const items = await collect(readLines(chunked(buf, size)));
      expect(items.map((i) => ('error' in i ? i : { line: i.line, length: i.value.length }))).toEqual([
        { line: 1, length: 5 },
        { line: 2, error: 'line exceeds 1 MiB' },
        { line: 3, length: MAX_LINE_BYTES },
        { line: 4, length: 5 },
        { line: 5, error: 'line exceeds 1 MiB' },
      ]);
    }
  });

  it('accepts plain Uint8Array chunks', async () => {
    async function* u8() {
      yield new TextEncoder().encode('one\ntw');
      yield new TextEncoder().encode('o\n');
    }
    expect(await collect(readLines(u8() as AsyncIterable<Buffer>))).toEqual([
      { line: 1, value: 'one' },
      { line: 2, value: 'two' },
    ]);
  });
});

describe('text', () => {
  for (const name of LOGHUB) {
    it(`reads every line of loghub ${name}`, async () => {
      const path = `${DATA}/loghub/${name}/${name}_2k.log`;
      // HDFS alone ends with a CRLF; the others stop without a final newline.
      expect(readFileSync(path, 'latin1').endsWith('\r\n')).toBe(name === 'HDFS');
      const expected = fileLines(path);
      const items = await parseFile(path, 'text');
      expect(items).toHaveLength(2000);
      expect(errors(items)).toEqual([]);
      items.forEach((item, i) => expect(item).toEqual({ line: i + 1, value: expected[i] }));
      expect(items[1999]).toEqual({ line: 2000, value: expected[1999] });
      expect(values(items).some((v) => String(v).includes('\r'))).toBe(false);
    });
  }

  it('skips blank and whitespace-only lines silently and keeps line numbers exact', async () => {
    const items = await parseFile(new URL('crlf-no-final-newline.log', FIX), 'text', 3);
    expect(items.map((i) => i.line)).toEqual([1, 3, 5]);
    expect(values(items)).toEqual([
      '081109 203615 148 INFO dfs.DataNode: first',
      '[Sun Dec 04 04:47:44 2005] [error] mod_jk child',
      'last line, no newline',
    ]);
  });

  it('reports a line that is not UTF-8 as an error item', async () => {
    const items = await parseFile(new URL('bad-utf8.log', FIX), 'text');
    expect(items).toEqual([
      { line: 1, value: 'café ok' },
      { line: 2, error: 'invalid UTF-8' },
      { line: 3, error: 'invalid UTF-8' },
      { line: 4, value: 'fine again' },
    ]);
  });
});

describe('ndjson', () => {
  it('reads the 500 nginx status objects', async () => {
    const items = await parseFile(`${DATA}/ingest/nginxplus_status.ndjson`, 'ndjson', 65536);
    expect(items).toHaveLength(500);
    expect(errors(items)).toEqual([]);
    expect(items.map((i) => i.line)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    const raw = fileLines(`${DATA}/ingest/nginxplus_status.ndjson`);
    expect(items[0]).toEqual({ line: 1, value: JSON.parse(raw[0]) });
    expect(items[499]).toEqual({ line: 500, value: JSON.parse(raw[499]) });
    expect((items[0] as { value: { nginx_version: string } }).value.nginx_version).toBe('1.9.4');
  });

  it('reads the 5,183 SciFact documents', async () => {
    const path = `${DATA}/scifact/corpus.jsonl`;
    const items = await parseFile(path, 'ndjson', 65536);
    expect(items).toHaveLength(5183);
    expect(errors(items)).toEqual([]);
    const raw = fileLines(path);
    for (const n of [1, 2, 2600, 5183]) expect(items[n - 1]).toEqual({ line: n, value: JSON.parse(raw[n - 1]) });
  });

  it('refuses bad JSON, bad UTF-8 and non-objects line by line, skipping blank lines', async () => {
    const items = await parseFile(new URL('bad.ndjson', FIX), 'ndjson', 16);
    expect(items.map((i) => ('error' in i ? { line: i.line, error: i.error.replace(/:.*/, '') } : i))).toEqual([
      { line: 1, value: { id: 1, message: 'ok' } },
      { line: 2, error: 'invalid JSON' },
      { line: 3, error: 'invalid UTF-8' },
      { line: 6, error: 'expected a JSON object' },
      { line: 7, error: 'expected a JSON object' },
      { line: 8, value: { id: 8, message: 'café' } },
      { line: 9, value: { id: 9, message: 'last, no newline' } },
    ]);
    // The parser's own message is passed on.
    expect((items[1] as { error: string }).error).toMatch(/^invalid JSON: .+/);
  });
});

describe('json', () => {
  it('cuts an array into elements with their starting lines; a bad element costs only itself', async () => {
    const items = await parseFile(new URL('array.json', FIX), 'json', 16);
    expect(items.map((i) => ('error' in i ? { line: i.line, error: i.error.replace(/:.*/, '') } : i))).toEqual([
      { line: 2, value: { id: 'a', message: 'first, with [brackets] and {braces}' } },
      { line: 3, value: { id: 'b', message: 'escaped " quote and \\ backslash' } },
      { line: 7, error: 'invalid JSON' },
      { line: 8, error: 'expected a JSON object' },
      { line: 9, value: { id: 'e', nested: { list: [1, 2, { deep: ']}' }] } } },
    ]);
  });

  it('reads a single top-level object', async () => {
    expect(await parseFile(new URL('object.json', FIX), 'json')).toEqual([
      { line: 1, value: { id: 'only', title: 'One object', body: 'a whole file' } },
    ]);
  });

  it('reports truncation at the element that was cut off', async () => {
    expect(await parseFile(new URL('truncated.json', FIX), 'json', 5)).toEqual([
      { line: 2, value: { id: 'a' } },
      { line: 3, error: 'unexpected end of input: value not closed' },
    ]);
    expect(await parseBuf('[\n{"a":1}\n', 'json')).toEqual([
      { line: 2, value: { a: 1 } },
      { line: 2, error: 'unexpected end of input: array not closed' },
    ]);
    expect(await parseBuf('{"a":\n{"b":1}', 'json')).toEqual([{ line: 1, error: 'unexpected end of input: value not closed' }]);
  });

  it('refuses a top level that is neither object nor array, and data after it', async () => {
    expect(await parseFile(new URL('scalar.json', FIX), 'json')).toEqual([
      { line: 3, error: 'expected a JSON object or an array of objects' },
    ]);
    expect(await parseBuf('[{"a":1}]\n\n[{"b":2}]', 'json')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, error: 'unexpected data after the top-level JSON value' },
    ]);
  });

  it('flags empty and trailing elements', async () => {
    expect(await parseBuf('[{"a":1},,{"b":2},]', 'json')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 1, error: 'invalid JSON: missing array element' },
      { line: 1, value: { b: 2 } },
      { line: 1, error: 'invalid JSON: trailing comma in array' },
    ]);
  });

  it('yields nothing for an empty array or whitespace', async () => {
    expect(await parseBuf(' [ \n ] \n', 'json')).toEqual([]);
    expect(await parseBuf('\n  \n', 'json')).toEqual([]);
  });

  it('refuses an element over 1 MiB and reads the next one', async () => {
    const big = `[{"a":"${'z'.repeat(MAX_LINE_BYTES)}"},\n{"b":1}]`;
    expect(await parseBuf(big, 'json')).toEqual([
      { line: 1, error: 'element exceeds 1 MiB' },
      { line: 2, value: { b: 1 } },
    ]);
  });
});

describe('csv', () => {
  it('keeps quoted commas and newlines, and gives each row the line it starts on', async () => {
    const items = await parseFile(new URL('quoted.csv', FIX), 'csv', 8);
    expect(items).toEqual([
      { line: 2, value: { id: 1, name: 'plain', note: 'simple', count: 10 } },
      { line: 3, value: { id: 2, name: 'Doe, Jane', note: 'has, two, commas', count: -3 } },
      { line: 4, value: { id: 3, name: 'multi', note: 'line one\r\nline two\r\nline three', count: 2.5 } },
      { line: 7, value: { id: 4, name: 'quote', note: 'she said "hi"', count: '1.50' } },
      { line: 9, error: 'expected 4 columns, got 3' },
      { line: 10, value: { id: 6, name: '081109', note: '', count: true } },
      { line: 11, value: { id: 7, name: 'tail', note: 'ends\nhere', count: false } },
    ]);
  });

  it('converts a cell only when the conversion round-trips', () => {
    expect(['081109', '1.50', '-3', '2.5', '', 'true', 'false', 'True', 'NaN', 'Infinity', '-0', '1e5', '10', ' 7'].map(csvCell)).toEqual([
      '081109', '1.50', -3, 2.5, '', true, false, 'True', 'NaN', 'Infinity', '-0', '1e5', 10, ' 7',
    ]);
  });

  for (const name of LOGHUB) {
    it(`reads the 2,000 rows of loghub ${name} structured CSV`, async () => {
      const items = await parseFile(`${DATA}/loghub/${name}/${name}_2k.log_structured.csv`, 'csv');
      expect(items).toHaveLength(2000);
      expect(errors(items)).toEqual([]);
      const raw = fileLines(`${DATA}/loghub/${name}/${name}_2k.log`);
      items.forEach((item, i) => {
        const row = (item as { value: Record<string, unknown> }).value;
        expect(item.line).toBe(i + 2);
        expect(row.LineId).toBe(i + 1);
        // The Content column is the message part of the matching raw log line.
        expect(raw[i]).toContain(String(row.Content).trim());
      });
    });
  }

  it('keeps HDFS dates such as 081109 as strings and exact numbers as numbers', async () => {
    const items = await parseFile(`${DATA}/loghub/HDFS/HDFS_2k.log_structured.csv`, 'csv');
    expect((items[0] as { value: unknown }).value).toEqual({
      LineId: 1,
      Date: '081109',
      Time: 203615,
      Pid: 148,
      Level: 'INFO',
      Component: 'dfs.DataNode$PacketResponder',
      Content: 'PacketResponder 1 for block blk_38865049064139660 terminating',
      EventId: 'E10',
      EventTemplate: 'PacketResponder <*> for block blk_<*> terminating',
    });
  });

  it('refuses a malformed row and reads on; stops when the header is unreadable', async () => {
    expect(await parseBuf('a,b\n"x"y,1\n2,3\n', 'csv')).toEqual([
      { line: 2, error: expect.stringMatching(/^invalid CSV: /) },
      { line: 3, value: { a: 2, b: 3 } },
    ]);
    expect(await parseBuf(Buffer.from([0x61, 0x2c, 0xff, 0x0a, 0x31, 0x2c, 0x32]), 'csv')).toEqual([{ line: 1, error: 'invalid UTF-8' }]);
  });

  it('reports an unterminated quote at the row it opens', async () => {
    expect(await parseBuf('a,b\n1,2\n3,"open\nstill open', 'csv')).toEqual([
      { line: 2, value: { a: 1, b: 2 } },
      { line: 3, error: expect.stringMatching(/^invalid CSV: /) },
    ]);
  });

  it('drops a BOM before the header and yields nothing for a header alone', async () => {
    expect(await parseBuf('\uFEFFid,v\r\n1,x\r\n', 'csv', 1)).toEqual([{ line: 2, value: { id: 1, v: 'x' } }]);
    expect(await parseBuf('id,v\r\n', 'csv')).toEqual([]);
  });
});

describe('parseObject', () => {
  const FORMATS: IngestFormat[] = ['text', 'ndjson', 'json', 'csv'];

  it('yields nothing for empty input in every format', async () => {
    for (const format of FORMATS) expect(await parseBuf(Buffer.alloc(0), format)).toEqual([]);
  });

  it('skips empty and whitespace-only lines in every format without renumbering the others', async () => {
    const blanks = ['', '   ', '\t', ' \t \r', '\u00a0', '\uFEFF'];
    const lines = (rows: string[]) => rows.flatMap((row, i) => [row, blanks[i % blanks.length]]).join('\n');
    // each format's line 1, 3, 5, 7 hold a value and 2, 4, 6, 8 something blank
    const inputs: [IngestFormat, string, unknown[]][] = [
      ['text', lines(['one', 'two', 'three', 'four']), ['one', 'two', 'three', 'four']],
      ['ndjson', lines(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}']), [1, 2, 3, 4].map((n) => ({ n }))],
      ['csv', lines(['n', '2', '3', '4']), [2, 3, 4].map((n) => ({ n }))],
    ];
    for (const [format, text, expected] of inputs) {
      for (const size of [1, 5, 4096]) {
        const items = await parseBuf(text, format, size);
        expect(errors(items), format).toEqual([]);
        expect(items.map((i) => i.line), format).toEqual(format === 'csv' ? [3, 5, 7] : [1, 3, 5, 7]);
        expect(values(items), format).toEqual(expected);
      }
    }
    const json = '[\n{"n":1},\n   \n\t\n{"n":2}\n \n]\n  \n';
    expect(await parseBuf(json, 'json', 3)).toEqual([{ line: 2, value: { n: 1 } }, { line: 5, value: { n: 2 } }]);
  });

  const cases: [string, IngestFormat][] = [
    ['crlf-no-final-newline.log', 'text'],
    ['bad-utf8.log', 'text'],
    ['bad.ndjson', 'ndjson'],
    ['array.json', 'json'],
    ['object.json', 'json'],
    ['truncated.json', 'json'],
    ['quoted.csv', 'csv'],
  ];
  for (const [name, format] of cases) {
    it(`gives the same items for ${name} whatever the chunk size`, async () => {
      const buf = fixture(name);
      const whole = await parseBuf(buf, format, buf.length);
      expect(whole.length).toBeGreaterThan(0);
      expect(await parseBuf(buf, format, 1)).toEqual(whole);
      expect(await parseBuf(buf, format, 7)).toEqual(whole);
    });
  }

  it('gives the same items for a loghub sample in 1-byte and 7-byte chunks', async () => {
    const buf = readFileSync(`${DATA}/loghub/OpenStack/OpenStack_2k.log_structured.csv`).subarray(0, 20_000);
    const log = readFileSync(`${DATA}/loghub/HDFS/HDFS_2k.log`).subarray(0, 20_000);
    for (const [input, format] of [[buf, 'csv'], [log, 'text']] as const) {
      const whole = await parseBuf(input, format, input.length);
      expect(await parseBuf(input, format, 1)).toEqual(whole);
      expect(await parseBuf(input, format, 7)).toEqual(whole);
    }
  });
});
