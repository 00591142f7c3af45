import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, svc, tempDir } from './helpers/cli.js';
import type { IngestFormat, NewRecord } from '../src/engine/records.js';
import { parseObject } from '../src/engine/ingest/parse.js';
import { makeTransform } from '../src/engine/ingest/transform.js';
import { checkTimeFormat, makeLineTime } from '../src/engine/ingest/lineTime.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const at = (line: string, now = NOW, format?: string) => makeLineTime(format, now)(line);

describe('a text line names its own time', () => {
  it('ISO 8601 / RFC 3339: T or space, fractions, with or without a zone (none is UTC)', () => {
    expect(at('2024-05-16T00:00:00Z started')).toBe('2024-05-16T00:00:00.000Z');
    expect(at('2024-05-16T02:00:00+02:00 started')).toBe('2024-05-16T00:00:00.000Z');
    expect(at('2024-05-16T00:00:00.123456789-0700 started')).toBe('2024-05-16T07:00:00.123Z');
    expect(at('2024-05-16T00:00:00-07 started')).toBe('2024-05-16T07:00:00.000Z');
    expect(at('2024-05-16 00:00:00.5 25746 INFO x')).toBe('2024-05-16T00:00:00.500Z');
    expect(at('2024-05-16 00:00:00,008 INFO x')).toBe('2024-05-16T00:00:00.008Z');
    expect(at('2024-05-16T10:11 INFO x')).toBe('2024-05-16T10:11:00.000Z');
    expect(at('2024-05-16 10:11:12 +0100 Rails')).toBe('2024-05-16T09:11:12.000Z');
    expect(at('2024-05-16 10:11:12 UTC x')).toBe('2024-05-16T10:11:12.000Z');
    expect(at('2024/01/02 03:04:05 [error] 7#7: open() failed')).toBe('2024-01-02T03:04:05.000Z'); // nginx error log
    expect(at('[2024-01-02 03:04:05,123] INFO kafka.server')).toBe('2024-01-02T03:04:05.123Z');
    expect(at('INFO 2024-01-02T03:04:05Z after a level')).toBe('2024-01-02T03:04:05.000Z');
    expect(at('2024-01-02 without a time')).toBeNull();
    expect(at('2024-13-02 03:04:05 no such month')).toBeNull();
    expect(at('2023-02-29 03:04:05 no such day')).toBeNull();
    expect(at('2024-02-29 25:04:05 no such hour')).toBeNull();
  });

  it('RFC 3164 syslog, with or without a priority; RFC 5424 after its priority', () => {
    expect(at('Nov 22 07:00:00 host sshd[1]: x')).toBe('2026-11-22T07:00:00.000Z');
    expect(at('Jul  1 00:21:28 combo sshd(pam_unix)[19630]: x')).toBe('2026-07-01T00:21:28.000Z');
    expect(at('<34>Oct 11 22:14:15 mymachine su: failed')).toBe('2026-10-11T22:14:15.000Z');
    expect(at('<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog')).toBe('2003-10-11T22:14:15.003Z');
    expect(at('Foo 22 07:00:00 not a month')).toBeNull();
  });

  it('infers a syslog year: closest to the ingest time, and not more than a day after it', () => {
    const eve = Date.parse('2026-12-31T23:30:00Z');
    const newYear = Date.parse('2027-01-01T00:05:00Z');
    expect(at('Jan  1 00:10:00 h x', eve)).toBe('2027-01-01T00:10:00.000Z'); // a clock a little ahead
    expect(at('Dec 31 23:59:59 h x', newYear)).toBe('2026-12-31T23:59:59.000Z');
    expect(at('Jan  2 00:00:00 h x', newYear)).toBe('2027-01-02T00:00:00.000Z'); // within a day after
    expect(at('Jan  2 12:00:00 h x', newYear)).toBe('2026-01-02T12:00:00.000Z'); // more than a day after: last year
    expect(at('Nov 25 11:00:00 h x')).toBe('2026-11-25T11:00:00.000Z');
    expect(at('Nov 25 13:00:00 h x')).toBe('2025-11-25T13:00:00.000Z');
    expect(at('Feb 29 10:00:00 h x', Date.parse('2026-03-10T00:00:00Z'))).toBe('2024-02-29T10:00:00.000Z');
    expect(at('Feb 29 10:00:00 h x', Date.parse('2028-03-10T00:00:00Z'))).toBe('2028-02-29T10:00:00.000Z');
  });

  it('Apache/nginx access logs: the bracketed time anywhere in the line', () => {
    expect(at('127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326')).toBe('2000-10-10T20:55:36.000Z');
    expect(at('[10/Oct/2000:13:55:36 +0000] first')).toBe('2000-10-10T13:55:36.000Z');
    expect(at('host - - [10/Xyz/2000:13:55:36 -0700] "GET /"')).toBeNull();
  });

  it('Apache error logs: ctime in brackets, with or without microseconds', () => {
    expect(at('[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok')).toBe('2005-12-04T04:47:44.000Z');
    expect(at('[Fri Sep 09 10:42:29.902022 2011] [core:error] [pid 35708:tid 4328636416] x')).toBe('2011-09-09T10:42:29.902Z');
    expect(at('Sun Dec  4 04:47:44 2005 bare ctime')).toBe('2005-12-04T04:47:44.000Z');
  });

  it('HDFS: yyMMdd HHmmss', () => {
    expect(at('081109 203615 148 INFO dfs.DataNode$PacketResponder: x')).toBe('2008-11-09T20:36:15.000Z');
    expect(at('991231 235959 1 INFO x')).toBe('1999-12-31T23:59:59.000Z');
    expect(at('081309 203615 148 INFO no 13th month')).toBeNull();
  });

  it('epoch seconds (10 digits, perhaps a fraction) and milliseconds (13 digits) leading the line, or after a label', () => {
    expect(at('1700000000 started')).toBe('2023-11-14T22:13:20.000Z');
    expect(at('1700000000.25 started')).toBe('2023-11-14T22:13:20.250Z');
    expect(at('1700000000123 started')).toBe('2023-11-14T22:13:20.123Z');
    expect(at('- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 RAS KERNEL INFO x')).toBe('2005-06-03T22:42:50.000Z'); // BGL
    expect(at('170000000012 twelve digits')).toBeNull();
    expect(at('17000000001234 fourteen digits')).toBeNull();
  });

  it('after a first token (OpenStack names its file first), and nowhere else', () => {
    expect(at('nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO nova.osapi_compute.wsgi.server')).toBe('2017-05-16T00:00:00.008Z');
    expect(at('GET /index.html 200 2024-01-02T03:04:05Z')).toBeNull();
    expect(at('no time here')).toBeNull();
    expect(at('')).toBeNull();
    expect(at('x'.repeat(100) + ' 2024-01-02T03:04:05Z first token too long')).toBeNull();
  });

  it('stays fast on long hostile lines', () => {
    const read = makeLineTime(undefined, NOW);
    const lines = ['['.repeat(200_000), '1'.repeat(200_000), '[10/Oct/2000:13:55:3'.repeat(10_000), '2024-01-01 '.repeat(20_000), `${'a '.repeat(50_000)}`];
    const start = performance.now();
    for (const line of lines) expect(read(line)).toBeNull();
    expect(performance.now() - start).toBeLessThan(500);
  });
});

describe('parse_config.time_format', () => {
  it('a name restricts the reader to that format; none turns it off', () => {
    expect(at('2024-05-16T00:00:00Z x', NOW, 'rfc3164')).toBeNull();
    expect(at('Nov 22 07:00:00 h x', NOW, 'rfc3164')).toBe('2026-11-22T07:00:00.000Z');
    expect(at('1700000000 x', NOW, 'iso8601')).toBeNull();
    expect(at('1700000000 x', NOW, 'epoch')).toBe('2023-11-14T22:13:20.000Z');
    expect(at('h - - [10/Oct/2000:13:55:36 -0700] "GET /"', NOW, 'clf')).toBe('2000-10-10T20:55:36.000Z');
    expect(at('2024-05-16T00:00:00Z x', NOW, 'none')).toBeNull();
    expect(at('2024-05-16T00:00:00Z x', NOW, 'auto')).toBe('2024-05-16T00:00:00.000Z');
  });

  it('a strftime-like pattern reads the first place in the line it matches', () => {
    expect(at('h - - [10/Oct/2000:13:55:36 -0700] "GET /"', NOW, '%d/%b/%Y:%H:%M:%S %z')).toBe('2000-10-10T20:55:36.000Z');
    expect(at('job 42 ran 16.05.2024 08:30:01,250 ok', NOW, '%d.%m.%Y %H:%M:%S,%f')).toBe('2024-05-16T08:30:01.250Z');
    expect(at('I1124 07:00:00.123456 glog line', NOW, 'I%m%d %H:%M:%S.%f')).toBe('2026-11-24T07:00:00.123Z'); // no year: inferred
    expect(at('at 20240516T083001Z', NOW, '%Y%m%dT%H%M%S%z')).toBe('2024-05-16T08:30:01.000Z');
    expect(at('Thursday 16 May 24 08:30', NOW, '%A %d %B %y %H:%M')).toBe('2024-05-16T08:30:00.000Z');
    expect(at('2024-05-16 08:30:01 x', NOW, '%F %T')).toBe('2024-05-16T08:30:01.000Z');
    expect(at('ts=1700000000 x', NOW, 'ts=%s')).toBe('2023-11-14T22:13:20.000Z');
    expect(at('100% at 2024-05-16', NOW, '%% at %Y-%m-%d')).toBe('2024-05-16T00:00:00.000Z');
    expect(at('no date here', NOW, '%Y-%m-%d')).toBeNull();
  });

  it('refuses an unknown name, an unknown directive, a pattern without a day and month, a field named twice', () => {
    expect(checkTimeFormat('%d/%b/%Y:%H:%M:%S %z')).toBeNull();
    expect(checkTimeFormat('hdfs')).toBeNull();
    expect(checkTimeFormat('syslog-ish')).toMatch(/must be one of auto, none, iso8601/);
    expect(checkTimeFormat('%Y-%m-%d %Q')).toMatch(/unknown directive '%Q'/);
    expect(checkTimeFormat('%H:%M:%S')).toMatch(/needs a day/);
    expect(checkTimeFormat('%d %m %d')).toMatch(/twice/);
    expect(checkTimeFormat('%Y-%m-%d %')).toMatch(/lone '%'/);
    expect(checkTimeFormat('%Y-%m-%d' + ' '.repeat(60))).toMatch(/longer than/);
    expect(checkTimeFormat(3)).toMatch(/string/);
    expect(() => makeLineTime('%Q', NOW)).toThrow();
  });

  it('reaches the transform through the run; other formats still take time from their fields', () => {
    const ctx = { source_key: 'k', bucket: 'b', etag: 'e', format: 'text' as IngestFormat, ingested_at: NOW };
    const text = makeTransform({ time_format: '%d.%m.%Y %H:%M' }, ctx)('job ran 16.05.2024 08:30', 1) as NewRecord;
    expect(text.time).toBe('2024-05-16T08:30:00.000Z');
    const ndjson = makeTransform({ time_format: 'none' }, { ...ctx, format: 'ndjson' })({ message: 'm', time: '2024-05-16T08:30:00Z' }, 1) as NewRecord;
    expect(ndjson.time).toBe('2024-05-16T08:30:00.000Z');
  });
});

/** What share of each shipped sample's lines gets a time, and the first and last of them. */
const SAMPLES: [file: string, withTime: number, lines: number, first: string, last: string][] = [
  ['loghub/HDFS/HDFS_2k.log', 2000, 2000, '2008-11-09T20:36:15.000Z', '2008-11-11T10:20:17.000Z'],
  ['loghub/Apache/Apache_2k.log', 2000, 2000, '2005-12-04T04:47:44.000Z', '2005-12-05T19:15:57.000Z'],
  ['loghub/OpenSSH/OpenSSH_2k.log', 2000, 2000, '2025-12-10T06:55:46.000Z', '2025-12-10T11:04:45.000Z'],
  ['loghub/Linux/Linux_2k.log', 2000, 2000, '2026-06-14T15:16:01.000Z', '2026-07-27T14:42:00.000Z'],
  ['loghub/BGL/BGL_2k.log', 2000, 2000, '2005-06-03T22:42:50.000Z', '2006-01-03T15:13:09.000Z'],
  ['loghub/OpenStack/OpenStack_2k.log', 2000, 2000, '2017-05-16T00:00:00.008Z', '2017-05-16T00:14:47.687Z'],
  ['ingest/apache_access_combined.log', 10000, 10000, '2015-05-17T10:05:03.000Z', '2015-05-20T21:05:15.000Z'],
];

describe('the shipped log samples', () => {
  it.each(SAMPLES)('%s: every line carries a time (%i of %i)', async (file, withTime, lines, first, last) => {
    const transform = makeTransform({}, { source_key: 'k', bucket: 'b', etag: 'e', format: 'text', ingested_at: NOW });
    const times: (string | null)[] = [];
    for await (const item of parseObject(createReadStream(join(DATA, file)), 'text')) {
      if (!('value' in item)) throw new Error(item.error);
      times.push((transform(item.value, item.line) as NewRecord).time);
    }
    expect(times.length).toBe(lines);
    expect(times.filter((t) => t !== null).length).toBe(withTime);
    expect([times[0], times.at(-1)]).toEqual([first, last]);
  });
});

describe('svc search finds text lines by their own time', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], input?: string) => svc([...args, '--output', 'json'], { dataDir, input });

  beforeAll(() => {
    init(dataDir);
    expect(run(['datasets', 'create', 'plain']).status).toBe(0);
  });
  afterAll(() => dir.remove());

  it('--last and a time filter select lines stamped now, not lines stamped long ago', () => {
    const now = new Date();
    const syslogNow = `${now.toUTCString().slice(8, 11)} ${String(now.getUTCDate()).padStart(2, ' ')} ${now.toISOString().slice(11, 19)}`;
    const file = join(dir.path, 'app.log');
    writeFileSync(file, [
      `${now.toISOString()} INFO fresh iso line`,
      `${syslogNow} host app[1]: fresh syslog line`,
      '2001-01-01T00:00:00Z INFO stale iso line',
      '081109 203615 148 INFO stale hdfs line',
    ].join('\n') + '\n');
    const ingested = run(['ingest', 'plain', file, '--format', 'text', '--wait']);
    expect(ingested.status, ingested.stderr).toBe(0);

    const last = run(['search', 'line', '--dataset', 'plain', '--last', '1h']).json().records;
    expect(last.map((r: { body: string }) => r.body.split(' ').slice(-3).join(' ')).sort()).toEqual(['fresh iso line', 'fresh syslog line']);
    const old = run(['search', 'stale', '--dataset', 'plain']).json().records;
    expect(old.map((r: { time: string }) => r.time).sort()).toEqual(['2001-01-01T00:00:00.000Z', '2008-11-09T20:36:15.000Z']);
  });

  it('a source with a time_format reads its lines with it, and a bad one is refused (exit 2, 422)', () => {
    const bad = run(['sources', 'create', '--dataset', 'plain', '--key', 'bad', '--format', 'text', '--time-format', '%Y-%Q']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown directive '%Q'/);
    const made = run(['sources', 'create', '--dataset', 'plain', '--key', 'dotted', '--format', 'text', '--time-format', '%d.%m.%Y %H:%M:%S']);
    expect(made.status, made.stderr).toBe(0);
    expect(made.json().parse_config).toEqual({ format: 'text', time_format: '%d.%m.%Y %H:%M:%S' });
    const file = join(dir.path, 'dotted.log');
    writeFileSync(file, 'batch 7 finished 16.05.2024 08:30:01 dotted\n2024-05-16T09:00:00Z dotted iso is not this format\n');
    expect(run(['ingest', 'plain', file, '--source', 'dotted', '--wait']).status).toBe(0);
    const records = run(['search', 'dotted', '--dataset', 'plain']).json().records;
    expect(records.map((r: { time: string | null }) => r.time).sort()).toEqual(['2024-05-16T08:30:01.000Z', null]);
    const filtered = run(['search', 'dotted', '--dataset', 'plain', '--where', 'time gte 2024-05-16T08:00:00Z']).json().records;
    expect(filtered.map((r: { time: string }) => r.time)).toEqual(['2024-05-16T08:30:01.000Z']);
  });
});
