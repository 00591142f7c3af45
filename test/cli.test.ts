import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA, init, svc, svcCommand, tempDir } from './helpers/cli.js';

const SYSTEMS = ['HDFS', 'Apache', 'OpenSSH', 'Linux', 'BGL', 'OpenStack'];
const logLines = (system: string) => readFileSync(join(DATA, 'loghub', system, `${system}_2k.log`), 'utf8').split('\r\n').filter((l) => l !== '');

describe('svc on a local data dir', () => {
  const dir = tempDir();
  const dataDir = join(dir.path, 'data');
  const run = (args: string[], input?: string) => svc([...args, '--output', 'json'], { dataDir, input });

  beforeAll(() => {
    init(dataDir);
    expect(run(['datasets', 'create', 'logs']).status).toBe(0);
  });
  afterAll(() => dir.remove());

  it('refuses a second init, and commands on a data dir that was never initialized', () => {
    const again = svc(['init', '--yes'], { dataDir });
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/already initialized/);
    const none = svc(['datasets', 'list'], { dataDir: join(dir.path, 'nowhere') });
    expect(none.status).toBe(3);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each(SYSTEMS)('ingests the %s raw log (CRLF) and its structured CSV, line for line', (system) => {
    const id = system.toLowerCase();
    expect(run(['datasets', 'create', id]).status).toBe(0);
    const text = run(['ingest', id, join(DATA, 'loghub', system, `${system}_2k.log`), '--format', 'text', '--wait']);
    expect(text.status, text.stderr).toBe(0);
    expect(text.json()).toMatchObject({ status: 'ready', documents: { parsed: 2000, malformed: 0, index_committed: 2000 } });
    const csv = run(['ingest', id, join(DATA, 'loghub', system, `${system}_2k.log_structured.csv`), '--wait']);
    expect(csv.status, csv.stderr).toBe(0);
    expect(csv.json()).toMatchObject({ status: 'ready', format: 'csv', documents: { parsed: 2000, malformed: 0 } });
    expect(run(['datasets', 'get', id]).json().record_count).toBe(4000);

    const lines = logLines(system);
    const hits = run(['search', lines[1999].split(/\s+/).slice(-2).join(' '), '--dataset', id, '--limit', '1000']).json();
    const fromLog = hits.records.filter((r: any) => r.provenance.source_key.endsWith('.log'));
    expect(fromLog.length).toBeGreaterThan(0);
    for (const r of fromLog) expect(r.body).toBe(lines[r.provenance.line - 1]);
  });

  it('keeps leading zeros of CSV cells and gives each column one type', () => {
    const rows = run(['search', '--dataset', 'hdfs', '--q', 'LineId:1', '--limit', '1']).json().records;
    // HDFS Time has 000012 further down, so the whole column stays text
    expect(rows[0].metadata).toMatchObject({ LineId: 1, Date: '081109', Time: '203615', Pid: 148, Level: 'INFO' });
    expect(rows[0].provenance.line).toBe(2);
  });

  it('reads stdin with -, and a second ingest of the same bytes adds nothing', () => {
    const events = [
      { id: 'e1', level: 'WARN', message: 'disk nearly full on block device', timestamp: '2026-11-22T07:00:00Z' },
      { id: 'e2', level: 'INFO', message: 'block report sent', timestamp: '2026-11-22T07:01:00Z', latency_ms: 12 },
    ].map((e) => JSON.stringify(e)).join('\n');
    const first = run(['ingest', 'logs', '-', '--format', 'ndjson', '--wait'], events);
    expect(first.status, first.stderr).toBe(0);
    expect(first.json().documents).toMatchObject({ parsed: 2, duplicates: 0 });
    const second = run(['ingest', 'logs', '-', '--format', 'ndjson', '--wait'], events);
    expect(second.json().documents).toMatchObject({ parsed: 2, duplicates: 2 });
    expect(run(['datasets', 'get', 'logs']).json().record_count).toBe(2);
    const warn = svc(['search', 'block', '--dataset', 'logs', '--where', 'level eq WARN', '--output', 'ndjson'], { dataDir });
    const records = warn.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.map((r) => r.id)).toEqual(['e1']);
    expect(records[0].time).toBe('2026-11-22T07:00:00.000Z');
    expect(records[0].provenance).toMatchObject({ dataset_id: 'logs', line: 1, source_bucket: 'hosted' });
    // without --wait a local command still carries the run out before it exits, and prints how it ended
    const third = run(['ingest', 'logs', '-', '--format', 'ndjson'], JSON.stringify({ id: 'e3', level: 'INFO', message: 'late report' }));
    expect(third.json()).toMatchObject({ status: 'ready', documents: { parsed: 1 } });
  });

  it('reports malformed lines with their numbers and ingests the rest', () => {
    const file = join(dir.path, 'mixed.ndjson');
    writeFileSync(file, Buffer.concat([Buffer.from('{"msg":"ok one"}\n{"msg": broken\n'), Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]), Buffer.from('{"msg":"ok two"}\n')]));
    const r = run(['ingest', 'logs', file, '--wait']);
    expect(r.status).toBe(0);
    const out = r.json();
    expect(out.documents).toMatchObject({ expected: 4, parsed: 2, malformed: 2 });
    expect(out.errors.map((e: any) => e.line)).toEqual([2, 3]);
    expect(out.errors[1].reason).toMatch(/UTF-8/);
    expect(out.lifecycle.reasons[0]).toMatch(/2 malformed/);
  });

  it('fails an empty object with exit 5 and a one-line message', () => {
    const file = join(dir.path, 'empty.log');
    writeFileSync(file, '');
    const r = svc(['ingest', 'logs', file, '--wait'], { dataDir });
    expect(r.status).toBe(5);
    expect(r.stderr.trim()).toMatch(/^svc: ingest run run_\S+ failed: empty_object/);
  });

  it('fails a local run with exit 5 without --wait too: this process carried it out', () => {
    const file = join(dir.path, 'empty-again.log');
    writeFileSync(file, '');
    expect(svc(['datasets', 'create', 'failing', '--no-semantic'], { dataDir }).status).toBe(0);
    const r = svc(['ingest', 'failing', file], { dataDir });
    expect(r.status).toBe(5);
    expect(r.stderr.trim()).toMatch(/^svc: ingest run run_\S+ failed: empty_object/);
  });

  it('refuses a stdin that is neither a pipe nor a file (/dev/null), and sends nothing', () => {
    const before = svc(['runs', 'list', '--output', 'json'], { dataDir }).json().length;
    const devnull = openSync('/dev/null', 'r');
    try {
      const r = spawnSync(...svcCommand(['ingest', 'logs', '-']), { stdio: [devnull, 'pipe', 'pipe'], env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '' }, encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/stdin is not a pipe or a file/);
    } finally {
      closeSync(devnull);
    }
    expect(svc(['runs', 'list', '--output', 'json'], { dataDir }).json().length).toBe(before);
  });

  it('ends an ingest on a terminal with one summary line', () => {
    const cmd = `${svcCommand([]).flat().join(' ')} ingest logs ${join(DATA, 'loghub/HDFS/HDFS_2k.log')} --format text --output json > /dev/null`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '' }, encoding: 'utf8' });
    expect(r.status, r.stdout).toBe(0);
    const last = r.stdout.replace(/\r/g, '\n').split('\n').map((l) => l.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').trim()).filter(Boolean).pop();
    expect(last).toMatch(/^2,000 records \(0 malformed, (0|2,000) duplicates\) into logs in \d+\.\d s — text ready/);
  });

  it('maps bad input to exit codes: 3 not found, 2 usage', () => {
    expect(svc(['ingest', 'nope', join(DATA, 'loghub/HDFS/HDFS_2k.log')], { dataDir }).status).toBe(3);
    expect(svc(['ingest', 'logs', join(dir.path, 'missing.log')], { dataDir }).status).toBe(3);
    expect(svc(['ingest', 'logs', '-', '--format', 'xml'], { dataDir }).status).toBe(2);
    expect(svc(['search', 'x', '--where', 'level frobs 3'], { dataDir }).status).toBe(2);
    expect(svc(['search', 'x', '--dataset', 'nope'], { dataDir }).status).toBe(3);
    const badQ = svc(['search', '--q', 'level:(WARN'], { dataDir });
    expect(badQ.status).toBe(2);
    expect(badQ.stderr).toMatch(/^svc: .*q/);
    const badId = svc(['datasets', 'create', 'Bad Id!'], { dataDir });
    expect(badId.status).toBe(2);
    expect(badId.stderr).toMatch(/dataset_id/);
    expect(svc(['datasets', 'create', 'logs'], { dataDir }).status).toBe(1);
    expect(svc(['frobnicate'], { dataDir }).status).toBe(2);
  });

  it('writes table, csv and ndjson', () => {
    const table = svc(['search', 'block', '--dataset', 'hdfs', '--limit', '3', '--output', 'table'], { dataDir });
    expect(table.stdout.split('\n')[0]).toMatch(/^SCORE\s+SOURCE\s+TEXT$/);
    const lines = table.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[4]).toMatch(/^3 of \d+ records$/);
    expect(lines[5]).toMatch(/^next page: --cursor \S+$/);
    const csv = svc(['datasets', 'list', '--output', 'csv'], { dataDir });
    expect(csv.stdout.split('\n')[0]).toBe('dataset_id,name,record_count,created_at');
    expect(csv.stdout).toMatch(/\nhdfs,hdfs,4000,/);
    expect(csv.stdout).toMatch(/[^\n]\n$/);
    const nd = svc(['search', 'block', '--dataset', 'hdfs', '--limit', '5', '--output', 'ndjson'], { dataDir });
    expect(nd.stdout.trim().split('\n').map((l) => JSON.parse(l).score_kind)).toEqual(Array(5).fill('bm25'));
  });

  it('lists fields and runs', () => {
    const fields = run(['fields', '--dataset', 'logs']).json().fields;
    expect(fields.find((f: any) => f.field_path === 'latency_ms')).toMatchObject({ type: 'i64', seen_count: 1 });
    expect(run(['datasets', 'create', 'mixed']).status).toBe(0);
    run(['ingest', 'mixed', '-', '--format', 'ndjson'], '{"code":404}\n{"code":"E404"}\n');
    const table = svc(['fields', '--dataset', 'mixed', '--output', 'table'], { dataDir }).stdout;
    expect(table).toMatch(/^mixed\s+code\s+i64\|str\s+2\s/m);
    const runs = run(['runs', 'list', '--dataset', 'logs', '--status', 'failed']).json().runs;
    expect(runs.length).toBe(1);
    expect(run(['runs', 'get', runs[0].ingest_run_id]).json().error_code).toBe('empty_object');
    expect(svc(['runs', 'get', 'run_nope'], { dataDir }).status).toBe(3);
  });

  it('lists datasets when the configured embedder cannot be made here, without semantic readiness', () => {
    const r = svc(['datasets', 'list', '--output', 'json'], { dataDir, env: { SVC_EMBEDDER: 'onnx' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.json().datasets.find((d: any) => d.dataset_id === 'logs').readiness).toMatchObject({ text_search: true, semantic_search: false });
  });

  it('finds a source by id or by key', () => {
    const byKey = run(['sources', 'get', 'logs']).json();
    expect(byKey).toMatchObject({ source_key: 'logs', dataset_id: 'logs' });
    expect(run(['sources', 'get', String(byKey.source_id)]).json().source_key).toBe('logs');
    expect(svc(['sources', 'get', 'no-such-source'], { dataDir }).status).toBe(3);
  });

  it('mints console sessions for known users only', () => {
    expect(run(['token', 'create', '--email', 'admin@localhost', '--ttl', '1h']).json().token).toMatch(/^ey/);
    expect(svc(['token', 'create', '--email', 'who@nowhere'], { dataDir }).status).toBe(3);
    expect(svc(['token', 'create', '--email', 'admin@localhost', '--ttl', 'soon'], { dataDir }).status).toBe(2);
  });

  it('leaves vectors to later on ingest; a semantic search or a jobs wait builds them first', () => {
    const notes = [
      'the database server ran out of disk space',
      'user logged in from a new laptop',
      'memory usage climbed until the process was killed',
      'the certificate expired and connections were refused',
    ].map((body, i) => JSON.stringify({ id: `n${i}`, body })).join('\n');
    for (const d of ['notes', 'waited']) {
      expect(run(['datasets', 'create', d]).status).toBe(0);
      const ingested = run(['ingest', d, '-', '--format', 'ndjson', '--wait'], notes).json();
      expect(ingested).toMatchObject({ status: 'ready', lifecycle: { state: 'semantic_pending' }, ready_for: { text_search: true, semantic_search: false } });
    }
    const runs = (d: string) => run(['runs', 'list', '--dataset', d]).json().runs;

    const hits = run(['search', 'no storage left on the drive', '--dataset', 'notes', '--mode', 'semantic', '--limit', '1']).json();
    expect(hits.records[0]).toMatchObject({ id: 'n0', score_kind: 'cosine' });
    expect(runs('notes')[0]).toMatchObject({ ready_for: { semantic_search: true }, documents: { semantic_embedded: 4 } });

    const pending = run(['jobs', 'list', '--type', 'semantic_embed', '--status', 'pending']).json().jobs.filter((j: any) => j.payload.dataset_id === 'waited');
    expect(pending).toHaveLength(1);
    expect(run(['jobs', 'wait', pending[0].job_id]).json().status).toBe('succeeded');
    expect(runs('waited')[0]).toMatchObject({ ready_for: { semantic_search: true }, documents: { semantic_embedded: 4 } });
  });

  it('deletes a dataset with its records', () => {
    expect(run(['datasets', 'create', 'gone']).status).toBe(0);
    run(['ingest', 'gone', join(DATA, 'loghub/Apache/Apache_2k.log'), '--wait']);
    const job = run(['datasets', 'delete', 'gone', '--yes', '--wait']).json();
    expect(job).toMatchObject({ scope: 'dataset', status: 'succeeded', target_dataset_id: 'gone', item_total_count: 1 });
    expect(job.items[0].result.deleted_documents).toBe(2000);
    expect(svc(['datasets', 'get', 'gone'], { dataDir }).status).toBe(3);
    expect(run(['datasets', 'create', 'gone']).json().record_count).toBe(0);
    expect(run(['search', 'error', '--dataset', 'gone']).json().total.value).toBe(0);
  });
});
