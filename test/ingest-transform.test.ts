import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DATA } from './helpers/cli.js';
import { storedRecord, TRANSFORM_VERSION, type IngestFormat, type NewRecord, type TransformConfig } from '../src/engine/records.js';
import { parseObject } from '../src/engine/ingest/parse.js';
import { lineIds, logLevel, makeTransform, toIsoTime } from '../src/engine/ingest/transform.js';

const CTX = { source_key: 'logs/app.ndjson', bucket: 'raw', etag: 'etag-1', format: 'ndjson' as IngestFormat };

function run(value: unknown, cfg: TransformConfig = {}, line = 1, format: IngestFormat = 'ndjson'): NewRecord {
  const out = makeTransform(cfg, { ...CTX, format })(value, line);
  if ('error' in out) throw new Error(out.error);
  return out;
}

function refuse(value: unknown, cfg: TransformConfig = {}): string {
  const out = makeTransform(cfg, CTX)(value, 1);
  if (!('error' in out)) throw new Error('expected a refusal');
  return out.error;
}

const expectedHash = (key: string, etag: string, line: number) =>
  createHash('sha256').update(JSON.stringify([key, etag, line])).digest('hex').slice(0, 24);

describe('id', () => {
  it('takes id, then _id, as strings', () => {
    expect(run({ id: 7, message: 'm' }).id).toBe('7');
    expect(run({ _id: 'abc', message: 'm' }).id).toBe('abc');
    expect(run({ _id: 'second', id: 'first' }).id).toBe('first');
    expect(run({ id: 7, _id: 'x' }).metadata).toEqual({ _id: 'x' });
  });

  it('hashes source key, etag and line when the record names no id', () => {
    const a = run({ message: 'm' }, {}, 42);
    expect(a.id).toBe(expectedHash(CTX.source_key, CTX.etag, 42));
    expect(a.id).toMatch(/^[0-9a-f]{24}$/);
    expect(run({ message: 'other content' }, {}, 42).id).toBe(a.id);
    expect(run({ message: 'm' }, {}, 43).id).not.toBe(a.id);
    expect(lineIds(CTX.source_key, 'etag-2', false)(42)).not.toBe(a.id);
    expect(lineIds('logs/other', CTX.etag, false)(42)).not.toBe(a.id);
  });

  it('orders a dataset\'s derived ids by line within an object, when the dataset keeps them ordered', () => {
    const ordered = (value: unknown, line: number, ctx: Partial<typeof CTX> = {}) => {
      const out = makeTransform({}, { ...CTX, ...ctx, ordered_ids: true })(value, line);
      if ('error' in out) throw new Error(out.error);
      return out.id;
    };
    const object = createHash('sha256').update(JSON.stringify([CTX.source_key, CTX.etag])).digest('hex').slice(0, 16);
    expect(ordered({ message: 'm' }, 42)).toBe(`${object}0000002a`);
    expect(ordered('a plain line', 42)).toBe(`${object}0000002a`);
    expect(ordered({ id: 'named', message: 'm' }, 42)).toBe('named');
    const lines = [1, 2, 15, 16, 255, 256, 70_000, 2 ** 32 - 1];
    const ids = lines.map((line) => ordered({ message: 'm' }, line));
    expect(ids.every((id) => /^[0-9a-f]{24}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(ordered({ message: 'm' }, 2 ** 32)).toBe(`${object}100000000`); // past 8 digits: longer, still its own
    expect(ordered({ message: 'm' }, 42, { etag: 'etag-2' }).slice(0, 16)).not.toBe(object);
    expect(ordered({ message: 'm' }, 42, { source_key: 'logs/other' }).slice(0, 16)).not.toBe(object);
  });

  it('ignores an id that is neither string nor number, keeping it in metadata', () => {
    const r = run({ id: { $oid: 'x' }, message: 'm' }, {}, 5);
    expect(r.id).toBe(expectedHash(CTX.source_key, CTX.etag, 5));
    expect(r.metadata).toEqual({ id: { $oid: 'x' } });
  });

  it('uses id_field and refuses a record that lacks it', () => {
    const r = run({ request_id: 'r-1', id: 'ignored', message: 'm' }, { id_field: 'request_id' });
    expect(r.id).toBe('r-1');
    expect(r.metadata).toEqual({ id: 'ignored' });
    expect(refuse({ id: 'x' }, { id_field: 'request_id' })).toBe("missing id field 'request_id'");
    expect(refuse({ request_id: '' }, { id_field: 'request_id' })).toBe("missing id field 'request_id'");
    expect(refuse({ request_id: null }, { id_field: 'request_id' })).toBe("missing id field 'request_id'");
  });
});

describe('title and body', () => {
  it('takes a string title, and leaves a non-string one in metadata', () => {
    expect(run({ title: 'T', body: 'B' })).toMatchObject({ title: 'T', body: 'B', metadata: {} });
    expect(run({ title: 3, body: 'B' })).toMatchObject({ title: null, metadata: { title: 3 } });
    expect(run({ headline: 'H', title: 'T' }, { title_field: 'headline' })).toMatchObject({ title: 'H', metadata: { title: 'T' } });
  });

  it('takes the first body candidate, matching keys in any case', () => {
    expect(run({ log: 'L', msg: 'M', message: 'G', text: 'X', body: 'B' }).body).toBe('B');
    expect(run({ log: 'L', content: 'C' }).body).toBe('C');
    expect(run({ log: 'L', Message: 'G' })).toMatchObject({ body: 'G', metadata: { log: 'L' } });
    expect(run({ Content: 'from loghub' }).body).toBe('from loghub');
    expect(run({ LOG: 'L' }).body).toBe('L');
  });

  it('turns a non-string body into text', () => {
    expect(run({ message: 42 }).body).toBe('42');
    expect(run({ message: { a: [1] } }).body).toBe('{"a":[1]}');
  });

  it('uses body_field over the candidates', () => {
    expect(run({ message: 'M', detail: 'D' }, { body_field: 'detail' })).toMatchObject({ body: 'D', metadata: { message: 'M' } });
  });

  it('falls back to the whole record as compact JSON, after renames and drops', () => {
    const r = run({ a: 1, b: { c: 'x' }, secret: 's', id: 'i' }, { rename: { a: 'alpha' }, drop: ['secret'] });
    expect(r.body).toBe('{"alpha":1,"b":{"c":"x"},"id":"i"}');
    expect(r.metadata).toEqual({ alpha: 1, b: { c: 'x' } });
  });
});

describe('time', () => {
  it('reads epoch seconds below 1e11 and milliseconds above', () => {
    expect(run({ timestamp: 1446249499 }).time).toBe('2015-10-30T23:58:19.000Z');
    expect(run({ timestamp: 1446249499322 }).time).toBe('2015-10-30T23:58:19.322Z');
    expect(run({ ts: '1446249499' }).time).toBe('2015-10-30T23:58:19.000Z');
    expect(run({ ts: '1446249499322' }).time).toBe('2015-10-30T23:58:19.322Z');
  });

  it('reads date strings as UTC, with or without a zone', () => {
    expect(run({ '@timestamp': '2015-05-17T10:05:03+02:00' }).time).toBe('2015-05-17T08:05:03.000Z');
    expect(run({ time: '2017-05-16 00:00:00.008' }).time).toBe('2017-05-16T00:00:00.008Z');
    expect(toIsoTime('2017-05-16 13:53:08,123')).toBe('2017-05-16T13:53:08.123Z');
    expect(toIsoTime('2015-10-31')).toBe('2015-10-31T00:00:00.000Z');
  });

  it('takes the first time candidate, case exactly', () => {
    const r = run({ ts: 1, time: 2, '@timestamp': 3, timestamp: 4 });
    expect(r.time).toBe('1970-01-01T00:00:04.000Z');
    expect(r.metadata).toEqual({ ts: 1, time: 2, '@timestamp': 3 });
    // loghub's HDFS "Time" is HHMMSS, not an epoch: it must not be taken for one.
    expect(run({ Time: 203615 })).toMatchObject({ time: null, metadata: { Time: 203615 } });
  });

  it('keeps an unparseable time in metadata and leaves time null', () => {
    expect(run({ timestamp: 'not a date', message: 'm' })).toMatchObject({ time: null, metadata: { timestamp: 'not a date' } });
    expect(run({ time: true, message: 'm' })).toMatchObject({ time: null, metadata: { time: true } });
    expect(run({ time: 1e300 }).time).toBeNull();
  });

  it('uses time_field over the candidates', () => {
    const r = run({ created: '2020-01-02T03:04:05Z', timestamp: 1 }, { time_field: 'created' });
    expect(r.time).toBe('2020-01-02T03:04:05.000Z');
    expect(r.metadata).toEqual({ timestamp: 1 });
  });
});

describe('metadata, rename and drop', () => {
  it('keeps every unused field as is, nested objects nested', () => {
    const r = run({ id: 'a', title: 't', message: 'm', timestamp: 0, host: 'h', http: { status: 200, path: ['x'] } }, {}, 9);
    expect(r).toEqual({
      id: 'a',
      title: 't',
      body: 'm',
      time: '1970-01-01T00:00:00.000Z',
      metadata: { host: 'h', http: { status: 200, path: ['x'] } },
      source_key: CTX.source_key,
      bucket: CTX.bucket,
      etag: CTX.etag,
      line: 9,
      transform_version: TRANSFORM_VERSION,
      names: { body: 'message', time: 'timestamp' },
    });
  });

  it('keeps the input names of title, body and time only where they differ from those', () => {
    expect(run({ title: 't', body: 'b', time: 0 }).names).toBeUndefined();
    expect(run({ subject: 's', Content: 'c', when: 0 }, { title_field: 'subject', time_field: 'when' }).names).toEqual({ title: 'subject', body: 'Content', time: 'when' });
    // a time that cannot be read stays in metadata under its name
    expect(run({ msg: 'm', ts: 'not a time' })).toMatchObject({ names: { body: 'msg' }, metadata: { ts: 'not a time' } });
    expect(run({ a: 1 }).names).toBeUndefined(); // the body is the record as JSON
  });

  it('renames before the rules look for fields', () => {
    const r = run({ event_text: 'hello', when: 1446249499, key: 'k1' }, { rename: { event_text: 'message', when: 'ts', key: 'id' } });
    expect(r).toMatchObject({ id: 'k1', body: 'hello', time: '2015-10-30T23:58:19.000Z', metadata: {} });
  });

  it('lets a renamed field win over one already so named', () => {
    expect(run({ message: 'old', text2: 'new' }, { rename: { text2: 'message' } })).toMatchObject({ body: 'new', metadata: {} });
  });

  it('drops fields by old or new name', () => {
    expect(run({ message: 'm', a: 1, b: 2, c: 3 }, { drop: ['a'], rename: { b: 'bee', c: 'sea' }, body_field: null }).metadata).toEqual({
      bee: 2,
      sea: 3,
    });
    expect(run({ message: 'm', a: 1, c: 3 }, { drop: ['sea'], rename: { c: 'sea' } }).metadata).toEqual({ a: 1 });
  });

  it('keeps a field named __proto__ as data', () => {
    const r = run(JSON.parse('{"message":"m","__proto__":{"polluted":true}}'));
    expect(Object.keys(r.metadata)).toEqual(['__proto__']);
    expect((r.metadata as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('refuses values that are not objects', () => {
    expect(refuse([1, 2])).toBe('expected a JSON object');
    expect(refuse(null)).toBe('expected a JSON object');
    expect(refuse(3)).toBe('expected a JSON object');
  });
});

describe('text lines', () => {
  it('makes the line the body, with a hashed id, no title and the time the line leads with', () => {
    const line = '081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 for block blk_1 terminating';
    const r = run(line, { id_field: 'ignored', body_field: 'ignored', time_field: 'ignored' }, 12, 'text');
    expect(r).toEqual({
      id: expectedHash(CTX.source_key, CTX.etag, 12),
      title: null,
      body: line,
      time: '2008-11-09T20:36:15.000Z',
      metadata: { level: 'INFO' },
      source_key: CTX.source_key,
      bucket: CTX.bucket,
      etag: CTX.etag,
      line: 12,
      transform_version: TRANSFORM_VERSION,
    });
    expect(run('no level here', {}, 1, 'text')).toMatchObject({ time: null, metadata: {} });
  });

  it('finds the first level word: upper case standalone, any case in brackets', () => {
    expect(logLevel('[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok')).toBe('NOTICE');
    expect(logLevel('[Sun Dec 04 04:51:18 2005] [error] mod_jk child workerEnv in error state 6')).toBe('ERROR');
    expect(logLevel('RAS KERNEL INFO instruction cache parity error corrected')).toBe('INFO');
    expect(logLevel('2017-05-16 00:00:00.008 25746 INFO nova.osapi_compute')).toBe('INFO');
    expect(logLevel('WARNING: disk nearly full')).toBe('WARN');
    expect(logLevel('[Warning] disk nearly full')).toBe('WARN');
    expect(logLevel('x WARN y ERROR')).toBe('WARN');
    expect(logLevel('DEBUG=1 then FATAL')).toBe('DEBUG');
    expect(logLevel('[trace] TRACE')).toBe('TRACE');
    for (const level of ['CRITICAL', 'SEVERE', 'FATAL']) expect(logLevel(`a ${level} b`)).toBe(level);
  });

  it('ignores lower-case bare words and words that merely contain a level', () => {
    expect(logLevel('an error occurred; info follows')).toBeNull();
    expect(logLevel('INFORMATION ERRORS WARNINGS')).toBeNull();
    expect(logLevel('MY_ERROR_CODE')).toBeNull();
    expect(logLevel('error: then later ERROR')).toBe('ERROR');
    expect(logLevel('sshd(pam_unix)[19939]: authentication failure')).toBeNull();
  });

  it('tags the loghub Apache log with its bracketed levels', async () => {
    const path = `${DATA}/loghub/Apache/Apache_2k.log`;
    const transform = makeTransform({}, { ...CTX, format: 'text' });
    const levels = new Map<string, number>();
    for await (const item of parseObject(createReadStream(path), 'text')) {
      if (!('value' in item)) throw new Error(item.error);
      const r = transform(item.value, item.line) as NewRecord;
      const level = String(r.metadata.level);
      levels.set(level, (levels.get(level) ?? 0) + 1);
    }
    const raw = readFileSync(path, 'utf8');
    expect(levels.get('ERROR')).toBe(raw.match(/\] \[error\] /g)?.length);
    expect(levels.get('NOTICE')).toBe(raw.match(/\] \[notice\] /g)?.length);
    expect([...levels.values()].reduce((a, b) => a + b)).toBe(2000);
  });
});

describe('on parsed data', () => {
  it('maps a loghub HDFS CSV row: Content is the body, the rest is metadata', async () => {
    const transform = makeTransform({}, { ...CTX, format: 'csv' });
    const items = parseObject(createReadStream(`${DATA}/loghub/HDFS/HDFS_2k.log_structured.csv`), 'csv');
    const first = (await items.next()).value as { line: number; value: unknown };
    const r = transform(first.value, first.line) as NewRecord;
    expect(r.body).toBe('PacketResponder 1 for block blk_38865049064139660 terminating');
    expect(r.time).toBeNull();
    expect(r.metadata).toMatchObject({ LineId: 1, Date: '081109', Time: 203615, Level: 'INFO' });
    expect(r.line).toBe(2);
    expect(r.names).toEqual({ body: 'Content' });
    await items.return(undefined);
  });

  it('types a loghub HDFS CSV column once for the object when it can read it twice: Time is text throughout', async () => {
    const path = `${DATA}/loghub/HDFS/HDFS_2k.log_structured.csv`;
    const rows: Record<string, unknown>[] = [];
    for await (const item of parseObject(() => createReadStream(path), 'csv')) rows.push((item as { value: Record<string, unknown> }).value);
    expect(rows).toHaveLength(2000);
    expect(rows[0]).toMatchObject({ LineId: 1, Date: '081109', Time: '203615', Pid: 148 });
    for (const col of ['Date', 'Time', 'Level', 'Content']) expect(rows.every((r) => typeof r[col] === 'string'), col).toBe(true);
    for (const col of ['LineId', 'Pid']) expect(rows.every((r) => typeof r[col] === 'number'), col).toBe(true);
  });

  it('makes a column numeric or boolean only when every non-empty cell is; an empty cell there has no value', async () => {
    const csv = 'n,f,b,s,e\n1,1.5,true,7,\n2,,false,007,\n-3,2,,x,\n';
    const rows: unknown[] = [];
    for await (const item of parseObject(() => (async function* () { yield Buffer.from(csv); })(), 'csv')) rows.push((item as { value: unknown }).value);
    expect(rows).toEqual([
      { n: 1, f: 1.5, b: true, s: '7', e: '' },
      { n: 2, f: null, b: false, s: '007', e: '' },
      { n: -3, f: 2, b: null, s: 'x', e: '' },
    ]);
  });

  it('maps an nginx status object: epoch-ms timestamp becomes time, nested stats stay nested', async () => {
    const first = readFileSync(`${DATA}/ingest/nginxplus_status.ndjson`, 'utf8').split('\n')[0];
    const value = JSON.parse(first);
    const r = run(value, {}, 1);
    expect(r.time).toBe(new Date(value.timestamp).toISOString());
    expect(r.body).toBe(JSON.stringify(value));
    expect(r.metadata.connections).toEqual(value.connections);
    expect('timestamp' in r.metadata).toBe(false);
  });
});

describe('the record a batch commits', () => {
  it('keeps every member the transform gave, and adds key, seq and created_at', () => {
    const made = [
      run({ message: 'disk full', level: 'error', ts: '2024-01-02T03:04:05Z', host: { name: 'a' } }, { time_field: 'ts' }),
      run('2024-01-02 03:04:05 ERROR disk full', {}, 4, 'text'),
      run({ id: 'x', title: 't', body: 'b' }),
    ];
    expect(made[0].names).toBeDefined(); // a member only some records have
    for (const rec of made) {
      const stored = storedRecord(rec, 'logs/obj/app.ndjson', 42, '2026-01-01T00:00:00.000Z');
      expect(stored).toEqual({ ...rec, key: 'logs/obj/app.ndjson', seq: 42, created_at: '2026-01-01T00:00:00.000Z' });
      expect(Object.keys(stored).sort()).toEqual([...Object.keys(rec), 'key', 'seq', 'created_at'].sort());
    }
  });
});
