import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeTerm, tokenize } from '../src/engine/text/analyzer.js';
import { DATA, init, serve, tempDir, type Server } from './helpers/cli.js';
import { client, expectStatus, ingestStream, until } from './helpers/http.js';

const LINES = readFileSync(join(DATA, 'loghub/HDFS/HDFS_2k.log'), 'utf8').split(/\r?\n/).filter(Boolean);
const QUERIES = ['PacketResponder terminating', 'Receiving block', 'addStoredBlock', 'Verification succeeded', 'blk_-1608999687919862906'];

/** Lines any term of the query is in: what a text search counts (the line at `deleted` left out). */
function expectedTotal(text: string, deleted = -1): number {
  const terms = new Set(tokenize(text).map(normalizeTerm).filter((t) => t !== null));
  return LINES.filter((line, i) => i !== deleted && tokenize(line).some((t) => terms.has(normalizeTerm(t)!))).length;
}

describe('text segments under svc serve (300 records a segment)', () => {
  const dir = tempDir('svc-segments-serve-');
  const dataDir = join(dir.path, 'data');
  let server: Server;
  let admin: { token: string; tenant_id: string };
  const http = client(() => server.url, () => ({ token: admin.token, tenant: admin.tenant_id }));
  const start = async () => (server = await serve(dataDir, { env: { SVC_TEXT_SEGMENT_RECORDS: '300' } }));
  const segmentFiles = () => readdirSync(join(dataDir, 'indexes', admin.tenant_id, 'logs')).filter((f) => /^text\.snapshot\.seg-\d+$/.test(f));
  const total = async (text: string) => expectStatus(await http.post('/v1/search', { datasets: ['logs'], text, limit: 5 }), 200).total.value as number;

  beforeAll(async () => {
    admin = init(dataDir);
    await start();
    expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'logs', semantic: false }), 201);
    await ingestStream(http, 'logs', LINES.slice(0, 1000).join('\n') + '\n', 'text');
    await ingestStream(http, 'logs', LINES.slice(1000).join('\n') + '\n', 'text');
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('seals six segments, merges four of them in the background, and counts every match across them', async () => {
    // 2,000 records: six sealed segments of 300 and 200 in memory; the four oldest merge into one
    await until('the merge', () => (segmentFiles().length === 3 ? true : undefined), 30_000);
    for (const text of QUERIES) expect(await total(text), text).toBe(expectedTotal(text));
    expect(await total('PacketResponder')).toBeGreaterThan(300); // matches in every segment
  });

  it('leaves a deleted record out at once, and after a kill and a restart', async () => {
    const before = await total('Verification succeeded');
    const hit = expectStatus(await http.post('/v1/search', { datasets: ['logs'], text: 'Verification succeeded', limit: 1 }), 200);
    const id = hit.records[0].id as string;
    const deleted = LINES.indexOf(hit.records[0].body);
    expect(LINES.lastIndexOf(hit.records[0].body)).toBe(deleted);
    const job = expectStatus(await http.call('DELETE', `/v1/admin/datasets/logs/records/${encodeURIComponent(id)}`), 202);
    await until('the deletion', async () => {
      const j = expectStatus(await http.get(`/v1/admin/jobs/${job.job_id}`), 200);
      return j.status === 'succeeded' ? j : undefined;
    });
    expect(await total('Verification succeeded')).toBe(before - 1);
    server.proc.kill('SIGKILL');
    await new Promise((ok) => server.proc.once('exit', ok));
    await start();
    expect(await total('Verification succeeded')).toBe(before - 1);
    for (const text of QUERIES) expect(await total(text), text).toBe(expectedTotal(text, deleted));
    expect(segmentFiles().length).toBe(3);
  });
});
