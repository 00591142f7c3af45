import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Invalid } from '../src/engine/errors.js';
import type { StoredRecord } from '../src/engine/records.js';
import { compileQuery } from '../src/engine/search/query.js';
import { DATA } from './helpers/cli.js';

function rec(body: string, metadata: Record<string, unknown> = {}, extra: Partial<StoredRecord> = {}): StoredRecord {
  return {
    id: extra.id ?? 'r1', seq: 1, title: null, body, time: null, metadata, created_at: '2024-01-01T00:00:00.000Z',
    source_key: 'src', bucket: 'b', key: 'logs/app.log', etag: 'e', line: 1, transform_version: 1, ...extra,
  };
}

/** HDFS_2k.log as the text parser would store it: level, pid and component in metadata, the message as body. */
const hdfs: StoredRecord[] = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log'), 'utf8')
  .split(/\r?\n/)
  .filter((l) => l !== '')
  .map((l, i) => {
    const m = /^(\d\d)(\d\d)(\d\d) (\d\d)(\d\d)(\d\d) (\d+) (\w+) ([^:]+): (.*)$/.exec(l)!;
    const time = `20${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z`;
    return rec(m[10], { pid: Number(m[7]), level: m[8], component: m[9] }, { id: `hdfs-${i + 1}`, line: i + 1, time });
  });

const count = (q: string) => {
  const c = compileQuery(q);
  return hdfs.filter((r) => c.matches(r)).length;
};

// Hand-copied rows of OpenStack_2k.log_structured.csv, with the CSV's strings kept as strings.
const api = rec('10.11.10.1 "GET /v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail HTTP/1.1" status: 200 len: 1893 time: 0.2477829', {
  Pid: '25746', Level: 'INFO', Component: 'nova.osapi_compute.wsgi.server', status: '200', len: '1893',
}, { id: 'os-1', time: '2017-05-16T00:00:00.008Z' });
const warn = rec('Unknown base file: /var/lib/nova/instances/_base/a489c868f0c37da93b76227c91bb03908ac0e742', {
  Pid: '2931', Level: 'WARNING', Component: 'nova.virt.libvirt.imagecache',
}, { id: 'os-57', time: '2017-05-16T00:00:27.330Z' });

describe('compileQuery on HDFS_2k.log', () => {
  it('matches bare terms through their stems', () => {
    expect(count('terminating')).toBe(311);
    // the file never says "terminated"; the stem makes it find the same lines
    expect(count('terminated')).toBe(311);
    expect(count('deleted')).toBe(492);
    expect(count('TERMINATING')).toBe(311);
  });

  it('tells a phrase from the same words apart', () => {
    // "Received block" lines share the stem of "receiving", in a phrase too
    expect(count('"Receiving block"')).toBe(586);
    expect(count('block receiving')).toBe(586);
    expect(count('"block receiving"')).toBe(0);
    expect(count('"PacketResponder 1 for block"')).toBe(108);
  });

  it('ignores stop words, alone or in a phrase', () => {
    expect(count('the terminating')).toBe(311);
    expect(count('"for the block" terminating')).toBe(311);
  });

  it('reads identifiers and addresses as phrases of their tokens', () => {
    expect(count('blk_38865049064139660')).toBe(1);
    expect(count('10.251.73.220')).toBe(13);
  });

  it('matches bare wildcards against single tokens', () => {
    expect(count('terminat*')).toBe(311);
    expect(count('Receiv?ng')).toBe(292);
    expect(count('receiv?')).toBe(0);
  });

  it('compares other fields case-insensitively and whole', () => {
    expect(count('level:WARN')).toBe(80);
    expect(count('level:warn')).toBe(80);
    expect(count('component:dfs.datanode')).toBe(1);
    expect(count('component:"dfs.DataNode"')).toBe(1);
    expect(count('component:dfs.DataNode$PacketResponder')).toBe(603);
  });

  it('applies field wildcards to the whole value', () => {
    expect(count('component:dfs.DataNode*')).toBe(1058);
    expect(count('component:DFS.FSData?et')).toBe(263);
    expect(count('component:DataNode*')).toBe(0);
  });

  it('treats field:* as existence, and a missing field as no match unless negated', () => {
    expect(count('level:*')).toBe(2000);
    expect(count('status:*')).toBe(0);
    expect(count('status:200')).toBe(0);
    expect(count('NOT status:*')).toBe(2000);
    expect(count('-status:200')).toBe(2000);
  });

  it('combines with AND, OR, NOT, - and implicit AND', () => {
    expect(count('receiving OR terminating')).toBe(897);
    expect(count('level:WARN AND serving')).toBe(80);
    expect(count('level:WARN serving')).toBe(80);
    expect(count('level:WARN AND NOT serving')).toBe(0);
    expect(count('-exception')).toBe(1920);
    expect(count('NOT level:info')).toBe(80);
  });

  it('binds AND tighter than OR, and parentheses override it', () => {
    expect(count('receiving OR terminating AND level:WARN')).toBe(586);
    expect(count('terminating AND level:WARN OR receiving')).toBe(586);
    expect(count('(receiving OR terminating) AND level:WARN')).toBe(0);
    expect(count('(receiving OR terminating) level:INFO')).toBe(897);
  });

  it('handles numeric ranges with inclusive and exclusive ends', () => {
    expect(count('pid:[13 TO 35]')).toBe(943);
    expect(count('pid:[13 TO 35}')).toBe(893);
    expect(count('pid:{13 TO 35]')).toBe(923);
    expect(count('pid:[1000 TO 2000]')).toBe(22);
    expect(count('pid:>5000')).toBe(924);
    expect(count('pid:<=35')).toBe(943);
    expect(count('pid:<35')).toBe(893);
    expect(count('pid:19')).toBe(242);
  });

  it('compares time by instant, with date or date-time bounds', () => {
    expect(count('time:[2008-11-10 TO 2008-11-11}')).toBe(965);
    expect(count('time:>=2008-11-11')).toBe(885);
    expect(count('time:<2008-11-10')).toBe(150);
    expect(count('time:[2008-11-09T21:00:00Z TO 2008-11-09T22:00:00Z}')).toBe(58);
    expect(count('@timestamp:[2008-11-11 TO *]')).toBe(885);
    expect(count('time:"2008-11-09T20:36:15Z"')).toBe(1);
  });
});

describe('compileQuery on single records', () => {
  it('compares numeric strings numerically', () => {
    expect(compileQuery('status:200').matches(api)).toBe(true);
    expect(compileQuery('status:200.0').matches(api)).toBe(true);
    expect(compileQuery('status:>=400').matches(api)).toBe(false);
    expect(compileQuery('len:[1000 TO 2000]').matches(api)).toBe(true);
    expect(compileQuery('Pid:>25000').matches(warn)).toBe(false);
    expect(compileQuery('Pid:>25000').matches(api)).toBe(true);
  });

  it('matches words inside URLs and paths of OpenStack bodies', () => {
    expect(compileQuery('servers AND detail').matches(api)).toBe(true);
    expect(compileQuery('"unknown base file"').matches(warn)).toBe(true);
    expect(compileQuery('"base unknown file"').matches(warn)).toBe(false);
    expect(compileQuery('/instances\\/_base/').matches(warn)).toBe(true);
    expect(compileQuery('Component:/^nova\\.virt\\./').matches(warn)).toBe(true);
    expect(compileQuery('Level:warning OR status:404').matches(warn)).toBe(true);
    expect(compileQuery('Level:warning AND status:404').matches(warn)).toBe(false);
  });

  it('scopes title: and body: to that member with text semantics', () => {
    const doc = rec('The disks were replaced yesterday', {}, { title: 'Storage maintenance' });
    expect(compileQuery('title:maintenance').matches(doc)).toBe(true);
    expect(compileQuery('title:replacing').matches(doc)).toBe(false);
    expect(compileQuery('body:replacing').matches(doc)).toBe(true);
    expect(compileQuery('body:"disks were replaced"').matches(doc)).toBe(true);
    expect(compileQuery('title:stor*').matches(doc)).toBe(true);
    expect(compileQuery('maintenance replaced').matches(doc)).toBe(true);
  });

  it('reads booleans, arrays and nested or dotted metadata', () => {
    const r = rec('x', {
      ok: true,
      tags: ['blue', 'Green'],
      upstream: { peers: [{ server: '10.0.0.1:8080', state: 'up' }, { server: '10.0.0.1:8081', state: 'unhealthy' }] },
      'http.code': 503,
      host: 'web1',
      url: '/v2/54fadb412c4e40cdbaed9335e4c35a9e/servers/detail',
    });
    expect(compileQuery('ok:true').matches(r)).toBe(true);
    expect(compileQuery('ok:false').matches(r)).toBe(false);
    expect(compileQuery('tags:green').matches(r)).toBe(true);
    expect(compileQuery('tags:red').matches(r)).toBe(false);
    expect(compileQuery('NOT tags:blue').matches(r)).toBe(false);
    expect(compileQuery('upstream.peers.state:unhealthy').matches(r)).toBe(true);
    expect(compileQuery('metadata.upstream.peers.server:"10.0.0.1:8081"').matches(r)).toBe(true);
    expect(compileQuery('upstream.peers.server:10.0.0.1:8080').matches(r)).toBe(true);
    // values with dots and colons, unquoted, keep their wildcards
    expect(compileQuery('upstream.peers.server:10.0.0.1:80*').matches(r)).toBe(true);
    expect(compileQuery('upstream.peers.server:10.0.0.2:*').matches(r)).toBe(false);
    expect(compileQuery('url:/v2/*/detail').matches(r)).toBe(true);
    expect(compileQuery('url:/v3/*').matches(r)).toBe(false);
    expect(compileQuery('http.code:[500 TO 599]').matches(r)).toBe(true);
    expect(compileQuery('host:web*').matches(r)).toBe(true);
    expect(compileQuery('host:w?b1').matches(r)).toBe(true);
    expect(compileQuery('host:w?b2').matches(r)).toBe(false);
  });

  it('reads time aliases from the record, or from metadata when the record has no time', () => {
    const status = rec('', { timestamp: 1446249499322, connections: { active: 2 } });
    expect(compileQuery('timestamp:>1446249499000').matches(status)).toBe(true);
    expect(compileQuery('timestamp:>1446249499000').matches(api)).toBe(false);
    expect(compileQuery('@timestamp:>=2017-05-16T00:00:00Z').matches(api)).toBe(true);
    expect(compileQuery('connections.active:2 AND metadata.connections.active:>=2').matches(status)).toBe(true);
  });

  it('treats an empty q as matching everything', () => {
    const c = compileQuery('   ');
    expect(c.matches(api)).toBe(true);
    expect(c.scoringText).toBe('');
  });
});

describe('scoringText', () => {
  it('keeps bare terms and phrases outside negation only', () => {
    const c = compileQuery('terminating AND NOT exception "receiving block" level:INFO -foo term* title:disk (bar OR baz)');
    expect(c.scoringText).toBe('terminating receiving block bar baz');
  });
});

describe('invalid q', () => {
  it.each(['(level:INFO', 'level:INFO)', 'AND terminating', 'level:', 'terminating OR'])('rejects %j with a located issue', (q) => {
    let caught: unknown;
    try {
      compileQuery(q);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(Invalid);
    const issue = (caught as Invalid).issues[0];
    expect(issue.loc).toEqual(['body', 'q']);
    expect(issue.type).toBe('value_error');
    expect(issue.input).toBe(q);
    expect(issue.msg).not.toMatch(/Found no parsings/);
    expect(issue.msg.length).toBeGreaterThan(10);
  });

  it('points at the offending column', () => {
    expect(() => compileQuery('level:INFO)')).toThrow(/column 11/);
  });

  it('refuses a range without its closing bracket, and still reads a bracketed word', () => {
    expect(() => compileQuery('status:[500 TO 599')).toThrow(/unclosed range: write status:\[min TO max\]/);
    expect(() => compileQuery('bytes:{1 TO *')).toThrow(/unclosed range/);
    const word = compileQuery('msg:[INFO]');
    expect(word.matches({ metadata: { msg: '[INFO]' } } as never)).toBe(true);
  });
});
