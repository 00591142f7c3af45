import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitWidths } from '../src/cli/fit.js';
import { tableText } from '../src/cli/output.js';
import { init, serve, SVC, svc, tempDir, type Server } from './helpers/cli.js';

const ESC = '\x1b[';
const stripAnsi = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`;
const lines = (s: string) => s.split(/\r?\n/).filter((l) => l !== '');

const RECORDS = Array.from({ length: 300 }, (_, i) =>
  JSON.stringify({
    title: i % 2 ? `Disk alert ${i}` : `Login ${i}`,
    message: `${i % 2 ? 'disk quota exceeded on volume' : 'user signed in from the office network'} number ${i} with some words to make the body long enough to be cut`,
    ts: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
    level: i % 2 ? 'WARN' : 'INFO',
  }),
).join('\n') + '\n';

describe('svc on a terminal', () => {
  const dir = tempDir('svc-terminal-');
  const dataDir = join(dir.path, 'data');
  const env = { XDG_CONFIG_HOME: join(dir.path, 'config') };
  const run = (args: string[], more: Record<string, string> = {}) => svc(args, { dataDir, env: { ...env, ...more } });

  /** svc on a pseudo-terminal `cols` wide (script(1)); what it printed, as the terminal got it. */
  const onTerminal = (args: string[], cols: number, more: Record<string, string> = {}) => {
    const command = `stty cols ${cols}; exec ${quote(process.execPath)} ${quote(SVC)} ${args.map(quote).join(' ')}`;
    const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', SVC_TENANT: '', ...env, ...more } });
    return { status: r.status, out: r.stdout };
  };

  beforeAll(() => {
    init(dataDir);
    expect(run(['datasets', 'create', 'logs', '--no-semantic']).status).toBe(0);
    const r = svc(['ingest', 'logs', '-', '--format', 'ndjson', '--title-field', 'title', '--body-field', 'message', '--time-field', 'ts', '--wait'], { dataDir, input: RECORDS, env });
    expect(r.status, r.stderr).toBe(0);
  });
  afterAll(() => dir.remove());

  it('fits a table to the terminal, header whole, scores to 3 decimals; a pipe gets no fitting', () => {
    const t = onTerminal(['search', 'disk', '--dataset', 'logs', '--limit', '5'], 72);
    expect(t.status).toBe(0);
    const table = lines(stripAnsi(t.out)).slice(0, 6);
    expect(table[0]).toMatch(/^SCORE\s+TIME\s+TITLE\s+SOURCE\s+TEXT$/);
    for (const l of table) expect(l.length).toBeLessThanOrEqual(72);
    expect(table[1]).toMatch(/^\d+\.\d{1,3}\s+2026-01-01T\S+\s+Disk alert/);
    expect(table[1]).toMatch(/…$/);
    // the source is the object's file name and line
    const nd = run(['search', 'disk', '--dataset', 'logs', '--limit', '1', '--output', 'ndjson']);
    const rec = JSON.parse(nd.stdout);
    expect(rec.score).not.toBe(Math.round(rec.score * 1000) / 1000);
    const piped = lines(run(['search', 'disk', '--dataset', 'logs', '--limit', '5', '--output', 'table']).stdout);
    expect(piped[0]).toMatch(/^SCORE\s+TIME\s+TITLE\s+SOURCE\s+TEXT$/);
    expect(piped[1]).toContain(`:${rec.provenance.line}`);
    expect(Math.max(...piped.slice(0, 6).map((l) => l.length))).toBeGreaterThan(72);
  });

  it('cuts the widest columns first and never a header', () => {
    expect(fitWidths([5, 30, 100], [5, 6, 4], 60)).toEqual([5, 26, 25]);
    expect(fitWidths([5, 10], [5, 10], 80)).toEqual([5, 10]);
    expect(fitWidths([12, 40], [12, 11], 10)).toEqual([12, 11]);
    const text = tableText([{ name: 'a-very-long-name-indeed', score: 1.23456789 }], ['name', 'score'], undefined, true, { width: 16, colour: false });
    expect(text.split('\n').slice(0, 2)).toEqual(['NAME       SCORE', 'a-very-l…  1.235']);
  });

  it('highlights matched words in colour on a terminal; plain without colour, in a pipe and in CSV; JSON keeps the tags', () => {
    const coloured = onTerminal(['search', 'quota', '--dataset', 'logs', '--limit', '2'], 200).out;
    expect(coloured).toContain(`${ESC}1;31mquota${ESC}0m`);
    expect(coloured).not.toContain('<em>');
    const noColour = onTerminal(['search', 'quota', '--dataset', 'logs', '--limit', '2'], 200, { NO_COLOR: '1' }).out;
    expect(noColour).not.toContain(ESC + '1;31m');
    expect(noColour).toMatch(/disk quota exceeded/);
    expect(noColour).not.toContain('<em>');
    const piped = run(['search', 'quota', '--dataset', 'logs', '--limit', '2', '--output', 'table']).stdout;
    expect(piped).not.toContain(ESC);
    expect(piped).not.toContain('<em>');
    expect(piped).toMatch(/disk quota exceeded/);
    const csv = run(['search', 'quota', '--dataset', 'logs', '--limit', '2', '--output', 'csv', '--fields', 'text']).stdout;
    expect(lines(csv)[1]).toMatch(/^disk quota exceeded/);
    const json = run(['search', 'quota', '--dataset', 'logs', '--limit', '2', '--output', 'json']).json();
    expect(json.records[0].snippets[0]).toContain('<em>quota</em>');
    expect(json.records[0]).not.toHaveProperty('text');
  });

  it('prints aggregations as small tables', () => {
    const out = run(['search', '--dataset', 'logs', '--limit', '1', '--agg', 'levels=terms:level', '--output', 'table']).stdout;
    expect(out).toMatch(/\nlevels\nKEY\s+COUNT\nINFO\s+150\nWARN\s+150\n/);
  });

  it('picks columns with --fields (or --columns), dotted paths into each row', () => {
    const csv = lines(run(['search', 'disk', '--dataset', 'logs', '--limit', '2', '--output', 'csv', '--fields', 'id,metadata.level,source']).stdout);
    expect(csv[0]).toBe('id,metadata.level,source');
    expect(csv[1]).toMatch(/^\w+,WARN,\S+:\d+$/);
    const table = lines(run(['search', 'disk', '--dataset', 'logs', '--limit', '2', '--output', 'table', '--columns', 'metadata.level,title']).stdout);
    expect(table[0]).toMatch(/^LEVEL\s+TITLE$/);
    expect(lines(run(['datasets', 'list', '--output', 'csv', '--fields', 'dataset_id,record_count']).stdout)).toEqual(['dataset_id,record_count', 'logs,300']);
    expect(lines(run(['runs', 'list', '--output', 'csv', '--fields', 'dataset_id,status']).stdout)[1]).toBe('logs,ready');
    expect(lines(run(['sql', 'SELECT level, count(*) AS n FROM logs GROUP BY level ORDER BY level', '--output', 'csv', '--fields', 'n']).stdout)).toEqual(['n', '150', '150']);
    // machine output keeps the API's shape
    expect(Object.keys(run(['datasets', 'list', '--output', 'json', '--fields', 'dataset_id']).json().datasets[0])).toContain('created_at');
  });

  it('takes short flags: -o -d -n -q -w', () => {
    const r = run(['search', '-d', 'logs', '-q', 'level:WARN', '-n', '3', '-o', 'ndjson']);
    expect(r.status, r.stderr).toBe(0);
    expect(lines(r.stdout).map((l) => JSON.parse(l).metadata.level)).toEqual(['WARN', 'WARN', 'WARN']);
    const w = run(['search', '-d', 'logs', '-w', 'level eq INFO', '-n', '2', '-o', 'csv', '--fields', 'metadata.level']);
    expect(lines(w.stdout)).toEqual(['metadata.level', 'INFO', 'INFO']);
    expect(run(['datasets', 'list', '-o', 'csv']).stdout).toMatch(/^dataset_id,/);
    expect(run(['search', '-o', 'yaml']).status).toBe(2);
  });

  it('prints a bash completion script that loads, from the command tree', () => {
    const r = spawnSync('bash', ['-c', `source <(${quote(process.execPath)} ${quote(SVC)} completion bash) && complete -p svc && COMP_WORDS=(svc views rec) COMP_CWORD=2 && _svc && echo "\${COMPREPLY[*]}" && COMP_WORDS=(svc search x --wh) COMP_CWORD=3 && _svc && echo "\${COMPREPLY[*]}"`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(lines(r.stdout)).toEqual(['complete -F _svc svc', 'records', '--where']);
    expect(run(['completion', 'zsh']).stdout).toMatch(/bashcompinit[\s\S]*complete -F _svc svc/);
    expect(run(['completion', 'fish']).stdout).toMatch(/__fish_seen_subcommand_from datasets; and __fish_seen_subcommand_from create' -l retention-days/);
    expect(run(['completion', 'tcsh']).status).toBe(2);
  });

  it('names the flag the user typed when a request is refused', () => {
    const r = run(['search', 'disk', '-n', '5000']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^svc: --limit: \S.*\n$/);
    expect(run(['sql', 'SELECT 1', '--limit', '0']).stderr).toMatch(/^svc: --limit: /);
  });

  it('ends quietly with exit 0 when the reader closes the pipe', () => {
    const r = spawnSync('bash', ['-c', `${quote(process.execPath)} ${quote(SVC)} search -d logs --all -n 10 -o ndjson 2>"$ERR" | head -1; echo "\${PIPESTATUS[0]}"; cat "$ERR"`], {
      encoding: 'utf8',
      env: { ...process.env, ...env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', ERR: join(dir.path, 'err.txt') },
    });
    const out = lines(r.stdout);
    expect(JSON.parse(out[0]).provenance.dataset_id).toBe('logs');
    expect(out.slice(1)).toEqual(['0']);
  });

  it('exits 130 quietly on Ctrl-C at a prompt', async () => {
    // no signal from the terminal itself: the Ctrl-C reaches the prompt as a key, whenever it reads it
    const command = `stty -isig; exec ${quote(process.execPath)} ${quote(SVC)} datasets delete logs`;
    const proc = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_URL: '', SVC_TOKEN: '', ...env } });
    let out = '';
    let sent = false;
    proc.stdout.on('data', (d) => {
      out += d;
      // Ctrl-C once the question is on screen
      if (!sent && /\(y\/N\)/.test(out)) {
        sent = true;
        proc.stdin.write('\x03');
      }
    });
    const code = await new Promise((ok) => proc.on('close', ok));
    expect(code).toBe(130);
    expect(out).not.toMatch(/svc:/);
    expect(run(['datasets', 'get', 'logs']).status).toBe(0);
  });

  describe('svc status and whoami', () => {
    let server: Server | undefined;
    const served = join(dir.path, 'served');
    afterAll(async () => server?.stop());

    it('says which data dir, server or profile a command would use, and from where', async () => {
      const local = run(['status', '--output', 'json']).json();
      expect(local).toMatchObject({ mode: 'local', data_dir: dataDir, data_dir_from: 'env', data_dir_exists: true, url: null, server: null, lock_pid: null });
      expect(run(['--data-dir', dataDir, 'status', '-o', 'json'], {}).json().data_dir_from).toBe('flag');
      expect(run(['whoami', '--output', 'table']).stdout).toMatch(/^mode: local\n/);

      const remote = run(['status', '-o', 'json'], { SVC_URL: 'http://127.0.0.1:9', SVC_TOKEN: 't' }).json();
      expect(remote).toMatchObject({ mode: 'remote', url: 'http://127.0.0.1:9', url_from: 'env', token_from: 'env' });
      expect(run(['--url', 'http://127.0.0.1:9', 'status', '-o', 'json']).json().url_from).toBe('flag');

      const token = init(served).token;
      server = await serve(served);
      const held = svc(['status', '-o', 'json'], { dataDir: served, env }).json();
      expect(held).toMatchObject({ mode: 'local', server: server.url, server_pid: server.proc.pid, lock_pid: server.proc.pid });
      const me = svc(['whoami', '-o', 'table'], { dataDir: join(dir.path, 'none'), env: { ...env, SVC_URL: server.url, SVC_TOKEN: token } });
      expect(me.stdout).toMatch(/^mode: remote\n/);
      const bad = svc(['search', 'x', '-n', '5000'], { dataDir: join(dir.path, 'none'), env: { ...env, SVC_URL: server.url, SVC_TOKEN: token } });
      expect([bad.status, bad.stderr]).toEqual([2, expect.stringMatching(/^svc: --limit: \S/)]);
    });
  });
});
