/**
 * Hostile lines through a real engine (LMDB data dir in a temp folder, text index worker): a line
 * past a limit is counted malformed with its number and reason, and every other line of the object
 * is stored and searchable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import type { IngestRun } from '../src/api/ingest.js';
import { Engine, type Caller } from '../src/engine/index.js';
import type { IngestFormat } from '../src/engine/records.js';
import { DATA, tempDir } from './helpers/cli.js';

const scifact = readFileSync(join(DATA, 'scifact/corpus.jsonl'), 'utf8').split('\n').slice(0, 40);
const titleOf = (line: string): string => JSON.parse(line).title;
const idOf = (line: string): string => JSON.parse(line)._id;
/** An object nested `levels` deep: the record is level 1. */
const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"leaf":1}${'}'.repeat(levels - 1)}`;

let dir: ReturnType<typeof tempDir>;
let engine: Engine;
let caller: Caller;

beforeAll(async () => {
  dir = tempDir();
  engine = await Engine.open(join(dir.path, 'data'));
  await engine.init('acme', 'admin@acme.test');
  caller = engine.localCaller();
});

afterAll(async () => {
  await engine?.close();
  dir?.remove();
});

async function ingest(dataset: string, body: string | Buffer, format: IngestFormat): Promise<IngestRun> {
  try {
    await engine.datasets.create(caller, { dataset_id: dataset });
  } catch {
    // a second run into the same dataset
  }
  const run = await engine.ingest.submit(caller, Readable.from([Buffer.from(body)]), { dataset_id: dataset, format });
  return engine.ingest.wait(caller, run.ingest_run_id);
}

/** Every record of a dataset: id → the line it came from. */
async function linesById(dataset: string): Promise<Map<string, number>> {
  const all = await engine.search.run(caller, { datasets: [dataset], limit: 1000 });
  return new Map(all.records.map((r) => [r.id, r.provenance.line]));
}

async function found(dataset: string, text: string): Promise<string[]> {
  return (await engine.search.run(caller, { text, datasets: [dataset], limit: 5 })).records.map((r) => r.id);
}

describe('a record nested past the depth limit', () => {
  it('in the middle of an ndjson file is malformed at its line; the lines before and after are stored and searchable', async () => {
    const lines = [...scifact];
    lines[19] = `{"_id":"deep","x":${nested(2500)}}`; // line 20: the depth that overflowed the stack
    lines[29] = `{"_id":"deep-1k","x":${nested(1000)}}`; // line 30: the depth that took 14 s and made 1,000 fields
    const run = await ingest('sci', lines.join('\n'), 'ndjson');
    expect(run.status).toBe('ready');
    expect(run.documents).toMatchObject({ parsed: 38, malformed: 2 });
    expect(run.errors).toEqual([
      { line: 20, reason: expect.stringContaining(`limit of ${LIMITS.recordDepth} levels`) },
      { line: 30, reason: expect.stringContaining(`limit of ${LIMITS.recordDepth} levels`) },
    ]);
    const stored = await linesById('sci');
    expect(stored.size).toBe(38);
    expect(stored.get(idOf(scifact[18]))).toBe(19);
    expect(stored.get(idOf(scifact[20]))).toBe(21);
    expect(stored.get(idOf(scifact[39]))).toBe(40);
    expect(await found('sci', titleOf(scifact[18]))).toContain(idOf(scifact[18]));
    expect(await found('sci', titleOf(scifact[20]))).toContain(idOf(scifact[20]));
    const fields = engine.fields.list(caller, { dataset_id: 'sci' }).map((f) => f.field_path);
    expect(fields.filter((p) => p.startsWith('x'))).toEqual([]);
  });

  it('as a 15 KB line of [[[[ costs only itself', async () => {
    const run = await ingest('brackets', ['{"msg":"first"}', '['.repeat(15_000), '{"msg":"third"}'].join('\n'), 'ndjson');
    expect(run).toMatchObject({ status: 'ready', documents: { parsed: 2, malformed: 1 } });
    expect(run.errors.map((e) => e.line)).toEqual([2]);
    expect([...(await linesById('brackets')).values()].sort()).toEqual([1, 3]);
  });

  it('in a json array is malformed at its line; at exactly the limit it is stored', async () => {
    const body = `[\n{"msg":"one"},\n{"msg":"two","x":${nested(LIMITS.recordDepth + 1)}},\n{"msg":"three","x":${nested(LIMITS.recordDepth - 1)}}\n]`;
    const run = await ingest('arr', body, 'json');
    expect(run).toMatchObject({ status: 'ready', documents: { parsed: 2, malformed: 1 } });
    expect(run.errors.map((e) => e.line)).toEqual([3]);
    expect([...(await linesById('arr')).values()].sort()).toEqual([2, 4]);
  });
});

describe("a record that would take its dataset past the field limit", () => {
  const LIMIT = LIMITS.datasetFields;
  const reason = `would add fields beyond the dataset's limit of ${LIMIT}`;
  const fieldCount = (dataset: string) => engine.fields.list(caller, { dataset_id: dataset }).length;
  /** One flat object with fields `<prefix>0` … `<prefix>n-1`. */
  const wide = (prefix: string, n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i])));

  it('is malformed with its line, across runs: fields discovered earlier count', async () => {
    // run 1: body (the record as JSON, there being no body field) and f0…f989
    const first = await ingest('wide', wide('f', LIMIT - 10), 'ndjson');
    expect(first).toMatchObject({ status: 'ready', documents: { parsed: 1, malformed: 0 } });
    expect(fieldCount('wide')).toBe(LIMIT - 9);
    const second = await ingest('wide', [
      wide('g', 5), // 996 fields
      wide('h', 10), // would make 1006: refused whole
      wide('f', 50), // known fields only
      JSON.stringify({ i: { j: { k: 1 } }, i2: [1, { l: 2 }] }), // i, i.j, i.j.k, i2 (arrays are one field): exactly the limit
      JSON.stringify({ one_more: true }),
    ].join('\n'), 'ndjson');
    expect(second).toMatchObject({ status: 'ready', documents: { parsed: 3, malformed: 2 } });
    expect(second.errors).toEqual([{ line: 2, reason }, { line: 5, reason }]);
    expect(fieldCount('wide')).toBe(LIMIT);
    const paths = engine.fields.list(caller, { dataset_id: 'wide' }).map((f) => f.field_path);
    expect(paths).toEqual(expect.arrayContaining(['g4', 'i.j.k', 'i2']));
    expect(paths.filter((p) => p.startsWith('h') || p === 'one_more')).toEqual([]);
    expect([...(await linesById('wide')).values()].sort()).toEqual([1, 1, 3, 4]);
  });

  it('in a CSV of 1,500 columns is every row malformed; nothing is stored and the run says why', async () => {
    const header = Array.from({ length: 1500 }, (_, i) => `col${i}`).join(',');
    const row = (n: number) => Array.from({ length: 1500 }, (_, i) => n * 10_000 + i).join(',');
    const run = await ingest('csv1500', [header, row(1), row(2), row(3)].join('\n'), 'csv');
    expect(run).toMatchObject({ status: 'failed', error_code: 'no_valid_records', documents: { parsed: 0, malformed: 3 } });
    expect(run.errors).toEqual([2, 3, 4].map((line) => ({ line, reason })));
    expect(run.error_message).toContain(reason);
    expect(fieldCount('csv1500')).toBe(0);
  });

  it('leaves a CSV within the limit alone', async () => {
    const header = Array.from({ length: 900 }, (_, i) => `col${i}`).join(',');
    const row = Array.from({ length: 900 }, (_, i) => i).join(',');
    const run = await ingest('csv900', [header, row, row.replace(/^0/, '1')].join('\n'), 'csv');
    expect(run).toMatchObject({ status: 'ready', documents: { parsed: 2, malformed: 0 } });
    expect(fieldCount('csv900')).toBe(901);
  });
});

describe('whitespace-only lines', () => {
  it('are skipped in a text object; the other lines keep their numbers', async () => {
    const run = await ingest('blank', 'first WARN line\n   \n\t\nsecond line\n \r\nthird line\n', 'text');
    expect(run).toMatchObject({ status: 'ready', documents: { parsed: 3, malformed: 0 } });
    const all = await engine.search.run(caller, { datasets: ['blank'], limit: 10 });
    expect(all.records.map((r) => [r.provenance.line, r.body]).sort()).toEqual([
      [1, 'first WARN line'],
      [4, 'second line'],
      [6, 'third line'],
    ]);
  });
});

describe('a record whose id or field name cannot be a key', () => {
  it('is malformed at its line; the rest of the object goes in', async () => {
    const lines = [
      JSON.stringify({ id: 'ok-1', message: 'first' }),
      JSON.stringify({ id: 'x'.repeat(LIMITS.recordId + 1), message: 'an id too long' }),
      JSON.stringify({ id: 'ok-3', message: 'third', ['k'.repeat(5000)]: 1 }),
      JSON.stringify({ id: 'ok-4', message: 'fourth', nested: { ['n'.repeat(LIMITS.fieldPath)]: 1 } }),
      JSON.stringify({ id: 'é'.repeat(600), message: 'six hundred two-byte characters: 1,200 bytes' }),
      JSON.stringify({ id: 'ok-6', message: 'sixth' }),
    ];
    const run = await ingest('keys', lines.join('\n') + '\n', 'ndjson');
    expect(run.status).toBe('ready');
    expect(run.documents.malformed).toBe(4);
    expect(run.errors!.map((e) => e.line)).toEqual([2, 3, 4, 5]);
    expect(run.errors![0].reason).toContain(`longer than ${LIMITS.recordId} bytes`);
    expect(run.errors![1].reason).toContain(`longer than ${LIMITS.fieldPath} characters`);
    expect([...(await linesById('keys')).entries()].sort()).toEqual([['ok-1', 1], ['ok-6', 6]]);
  });
});
