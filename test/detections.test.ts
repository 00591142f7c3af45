/**
 * Detections over HTTP on a real data dir: definitions, on-ingest evaluation with the semantics of
 * /v1/search, thresholds per group in a sliding window, dry runs and hits. Records are the lines
 * of the shared OpenSSH_2k.log, each with its own time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useApp } from './helpers/app.js';
import { DATA } from './helpers/cli.js';
import { client, expectStatus, ingestStream, until, type Json } from './helpers/http.js';

const SSH = readFileSync(join(DATA, 'loghub/OpenSSH/OpenSSH_2k.log'), 'utf8').split(/\r?\n/).filter((l) => l !== '');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "Dec 10 06:55:46 …" → 2025-12-10T06:55:46Z (syslog lines carry no year) */
const sshTime = (line: string): string => {
  const [, mon, day, hms] = /^(\w{3})\s+(\d+) (\d\d:\d\d:\d\d)/.exec(line)!;
  return `2025-${String(MONTHS.indexOf(mon!) + 1).padStart(2, '0')}-${day!.padStart(2, '0')}T${hms}Z`;
};
const rows = SSH.map((line, i) => ({ id: `ssh-${i}`, msg: line, n: i, timestamp: sshTime(line) }));
const ndjson = (items: unknown[]) => items.map((r) => JSON.stringify(r)).join('\n') + '\n';

const { t, http } = useApp();

const ingest = (datasetId: string, items: unknown[]) => ingestStream(http, datasetId, ndjson(items));

async function dataset(id: string): Promise<void> {
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: id, semantic: false }), 201);
}

const rule = (over: Json = {}): Json => ({
  name: 'failed passwords',
  severity: 'high',
  datasets: ['ssh'],
  query: { search_request: { q: '"Failed password"' } },
  trigger: { on_ingest: true },
  ...over,
});

async function allHits(id: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = expectStatus(await http.get(`/v1/detections/${id}/hits?limit=7${cursor ? `&cursor=${cursor}` : ''}`), 200);
    out.push(...page.hits);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const issues = (body: Json) => body.detail.map((d: Json) => d.loc.join('.'));

describe('detection definitions', () => {
  it('are created, read, listed, replaced and deleted; secrets never come back', async () => {
    await dataset('ssh');
    const made = expectStatus(await http.post('/v1/admin/detections', rule({ actions: [{ type: 'webhook', url: 'http://127.0.0.1:9/x', secret: 's3cret' }] })), 201);
    expect(made).toMatchObject({
      detection_id: expect.stringMatching(/^det_/), name: 'failed passwords', severity: 'high', enabled: true, datasets: ['ssh'],
      trigger: { on_ingest: true, cron: null, timezone: null }, threshold: null, actions: [{ type: 'webhook', url: 'http://127.0.0.1:9/x', secret_set: true }],
    });
    // the stored search runs over the detection's datasets, with no typo expansion
    expect(made.query.search_request).toMatchObject({ q: '"Failed password"', datasets: ['ssh'], max_expansion_terms: 0 });
    const got = await http.get(`/v1/admin/detections/${made.detection_id}`);
    expect(expectStatus(got, 200)).toEqual(made);
    expect(got.text).not.toContain('s3cret');
    expect(expectStatus(await http.get('/v1/admin/detections'), 200).detections.map((d: Json) => d.detection_id)).toContain(made.detection_id);

    const replaced = expectStatus(await http.call('PUT', `/v1/admin/detections/${made.detection_id}`, { json: rule({ name: 'renamed', severity: 'low', enabled: false }) }), 200);
    expect(replaced).toMatchObject({ detection_id: made.detection_id, name: 'renamed', severity: 'low', enabled: false, actions: [], created_at: made.created_at });
    expectStatus(await http.del(`/v1/admin/detections/${made.detection_id}`), 200);
    expectStatus(await http.get(`/v1/admin/detections/${made.detection_id}`), 404);
    expectStatus(await http.get(`/v1/detections/${made.detection_id}/hits`), 404);
  });

  it('refuses what could not run, naming each problem (422)', async () => {
    const sqlOnIngest = expectStatus(await http.post('/v1/admin/detections', rule({ query: { sql: 'SELECT 1' } })), 422);
    expect(issues(sqlOnIngest)).toContain('body.trigger.on_ingest');
    expect(sqlOnIngest.detail.find((d: Json) => d.loc.includes('on_ingest')).msg).toMatch(/schedule only/);
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ query: {} })), 422))).toContain('body.query');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ datasets: ['nope'] })), 422))).toContain('body.datasets.0');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ trigger: { on_ingest: false } })), 422))).toContain('body.trigger');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ trigger: { on_ingest: false, cron: '61 * * * *' } })), 422))).toContain('body.trigger.cron');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ trigger: { on_ingest: false, cron: '* * * * *', timezone: 'Mars/Olympus' } })), 422))).toContain('body.trigger.timezone');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ query: { search_request: { text: 'x', mode: 'semantic' } } })), 422))).toContain('body.query.search_request.mode');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ query: { search_request: { q: 'a AND (' } } })), 422))).toContain('body.query.search_request.q');
    const window = { count_gte: 3, window: '10m' };
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ threshold: { ...window, group_pattern: '(a+)+b' } })), 422))).toContain('body.threshold.group_pattern');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ threshold: { ...window, group_pattern: 'from \\S+' } })), 422))).toContain('body.threshold.group_pattern');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ threshold: { count_gte: 3, window: '10 minutes' } })), 422))).toContain('body.threshold.window');
    expect(issues(expectStatus(await http.post('/v1/admin/detections', rule({ severity: 'urgent' })), 422))).toContain('body.severity');
    expect(expectStatus(await http.get('/v1/admin/detections'), 200).detections).toEqual([]);
  });

  it('members read them; only admins change or test them', async () => {
    const key = expectStatus(await http.post('/v1/admin/api-keys', { name: 'reader', role: 'member' }), 201);
    const member = client(() => t.url, () => ({ token: key.token, tenant: t.admin.tenant_id }));
    const made = expectStatus(await http.post('/v1/admin/detections', rule()), 201);
    expectStatus(await member.get(`/v1/admin/detections/${made.detection_id}`), 200);
    expectStatus(await member.get(`/v1/detections/${made.detection_id}/hits`), 200);
    expectStatus(await member.post('/v1/admin/detections', rule()), 403);
    expectStatus(await member.post(`/v1/admin/detections/${made.detection_id}/test`, {}), 403);
    expectStatus(await member.del(`/v1/admin/detections/${made.detection_id}`), 403);
    expectStatus(await http.del(`/v1/admin/detections/${made.detection_id}`), 200);
  });
});

/** Requests a detection and /v1/search must agree on, record for record. */
const REQUESTS: Json[] = [
  { text: 'authentication failure' },
  { q: '"Failed password" AND n:<300' },
  { text: 'root', where: [{ field: 'n', op: 'gte', value: 100 }] },
  { q: 'preauth NOT invalid' },
  { q: 'sshd', time: { gte: '2025-12-10T07:00:00Z', lt: '2025-12-10T09:00:00Z' } },
  { q: 'body:/port 4[0-9]{4}/' },
];

describe('on ingest', () => {
  it('a record matches a detection exactly when it matches the same search request', async () => {
    await dataset('same');
    const dets: Json[] = [];
    for (const [i, req] of REQUESTS.entries()) dets.push(expectStatus(await http.post('/v1/admin/detections', rule({ name: `r${i}`, datasets: ['same'], query: { search_request: req } })), 201));
    // batches of 100: no hit holds more than the 100 records it shows
    const part = rows.slice(0, 600);
    for (let i = 0; i < part.length; i += 100) await ingest('same', part.slice(i, i + 100));
    for (const [i, req] of REQUESTS.entries()) {
      const hits = await allHits(dets[i].detection_id);
      const fired = hits.flatMap((h: Json) => h.records.map((r: Json) => r.id)).sort();
      for (const h of hits) expect(h.records.length).toBe(h.count);
      const found = expectStatus(await http.post('/v1/search', { ...dets[i].query.search_request, limit: 1000 }), 200);
      const searched = found.records.map((r: Json) => r.id).sort();
      expect(searched.length, JSON.stringify(req)).toBeGreaterThan(0);
      expect(fired, JSON.stringify(req)).toEqual(searched);
      // and the dry run over the same records says the same
      const dry = expectStatus(await http.post(`/v1/admin/detections/${dets[i].detection_id}/test`, {}), 200);
      expect(dry).toMatchObject({ records_evaluated: 600, records_matched: searched.length, complete: true });
    }
  });

  it('a rule created after data arrived looks only at new records; a disabled one at none', async () => {
    await dataset('later');
    await ingest('later', rows.slice(0, 200));
    const det = expectStatus(await http.post('/v1/admin/detections', rule({ datasets: ['later'] })), 201);
    const off = expectStatus(await http.post('/v1/admin/detections', rule({ datasets: ['later'], enabled: false })), 201);
    expect(await allHits(det.detection_id)).toEqual([]);
    await ingest('later', rows.slice(200, 400));
    const hits = await allHits(det.detection_id);
    const expected = rows.slice(200, 400).filter((r) => r.msg.includes('Failed password'));
    expect(hits).toHaveLength(1); // one batch, one hit
    expect(hits[0]).toMatchObject({ detection_id: det.detection_id, severity: 'high', group_value: null, count: expected.length });
    expect(hits[0].records.map((r: Json) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
    expect(hits[0].records[0].provenance).toMatchObject({ dataset_id: 'later', tenant_id: t.admin.tenant_id, line: expect.any(Number) });
    expect(hits[0].window_start).toBe(expected.map((r) => r.timestamp).sort()[0]!.replace('Z', '.000Z'));
    expect(await allHits(off.detection_id)).toEqual([]);
  });
});

describe('records sent again', () => {
  it('a record whose content changed is evaluated again; a reindex re-parse fires nothing', async () => {
    await dataset('again');
    const det = expectStatus(await http.post('/v1/admin/detections', rule({ datasets: ['again'] })), 201);
    const first = rows.slice(0, 100);
    await ingest('again', first);
    const before = first.filter((r) => r.msg.includes('Failed password')).length;
    expect((await allHits(det.detection_id)).map((h: Json) => h.count)).toEqual([before]);
    await ingest('again', first); // the same records: nothing new is stored, nothing fires
    const quiet = first.find((r) => !r.msg.includes('Failed password'))!;
    await ingest('again', [{ ...quiet, msg: `${quiet.msg} Failed password for root` }]);
    const hits = await allHits(det.detection_id);
    expect(hits.map((h: Json) => h.count)).toEqual([1, before]);
    expect(hits[0].records[0].id).toBe(quiet.id);

    const job = expectStatus(await http.post('/v1/admin/reindex/jobs', { dataset_id: 'again' }), 202);
    await until('the reindex', async () => {
      const j = expectStatus(await http.get(`/v1/admin/jobs/${job.job_id}`), 200);
      return j.status === 'succeeded' || j.status === 'failed' ? j : undefined;
    }).then((j) => expect(j.status, JSON.stringify(j)).toBe('succeeded'));
    expect(await allHits(det.detection_id)).toHaveLength(2);
  });
});

describe('thresholds', () => {
  it('failed passwords per source address in a 10-minute window fire for exactly the addresses a direct count finds', async () => {
    const COUNT = 5;
    const WINDOW = 10 * 60_000;
    await dataset('sshall');
    const det = expectStatus(await http.post('/v1/admin/detections', rule({
      name: 'password guessing', datasets: ['sshall'],
      threshold: { count_gte: COUNT, window: '10m', group_pattern: 'from (\\d+\\.\\d+\\.\\d+\\.\\d+)' },
    })), 201);
    // the direct count: per address, the times of its failed passwords; some COUNT of them within the window
    const times = new Map<string, number[]>();
    for (const r of rows) {
      const ip = /Failed password.* from (\d+\.\d+\.\d+\.\d+)/.exec(r.msg)?.[1];
      if (ip) times.set(ip, [...(times.get(ip) ?? []), Date.parse(r.timestamp)]);
    }
    const firstFire = new Map<string, number>();
    for (const [ip, ts] of times) {
      ts.sort((a, b) => a - b);
      for (let i = COUNT - 1; i < ts.length; i++) if (ts[i]! - ts[i - COUNT + 1]! < WINDOW) { firstFire.set(ip, ts[i]!); break; }
    }
    expect(firstFire.size).toBeGreaterThan(1);
    expect(times.size).toBeGreaterThan(firstFire.size); // some addresses stay under the threshold
    for (let i = 0; i < rows.length; i += 500) await ingest('sshall', rows.slice(i, i + 500));

    const hits = await allHits(det.detection_id);
    expect(new Set(hits.map((h: Json) => h.group_value))).toEqual(new Set(firstFire.keys()));
    const byGroup = new Map<string, Json[]>();
    for (const h of hits) byGroup.set(h.group_value, [...(byGroup.get(h.group_value) ?? []), h]);
    for (const [ip, group] of byGroup) {
      group.sort((a, b) => a.window_end.localeCompare(b.window_end));
      expect(Date.parse(group[0].window_end)).toBe(firstFire.get(ip));
      for (const h of group) {
        expect(h.count).toBe(COUNT);
        expect(Date.parse(h.window_end) - Date.parse(h.window_start)).toBe(WINDOW);
        for (const r of h.records) expect(r.body).toContain(`from ${ip}`);
      }
      // each match counts toward one hit at most
      const ids = group.flatMap((h: Json) => h.records.map((r: Json) => r.id));
      expect(new Set(ids).size).toBe(ids.length);
    }
    // the dry run over the same records fires the same
    const dry = expectStatus(await http.post(`/v1/admin/detections/${det.detection_id}/test`, {}), 200);
    const fired = new Set(hits.map((h: Json) => `${h.group_value}@${h.window_end}`));
    expect(dry.hits.length).toBe(Math.min(20, hits.length));
    for (const h of dry.hits) expect(fired).toContain(`${h.group_value}@${h.window_end}`);
  });
});

describe('hits', () => {
  it('page newest first and filter by since', async () => {
    await dataset('paged');
    const det = expectStatus(await http.post('/v1/admin/detections', rule({ datasets: ['paged'], query: { search_request: { q: 'sshd' } } })), 201);
    for (let i = 0; i < 5; i++) await ingest('paged', rows.slice(i * 10, i * 10 + 10));
    const hits = await allHits(det.detection_id);
    expect(hits).toHaveLength(5);
    const order = hits.map((h: Json) => h.hit_id);
    expect([...order].sort().reverse()).toEqual(order);
    const since = hits[2].triggered_at;
    const recent = expectStatus(await http.get(`/v1/detections/${det.detection_id}/hits?since=${encodeURIComponent(since)}`), 200).hits;
    expect(recent.map((h: Json) => h.hit_id)).toEqual(hits.filter((h: Json) => h.triggered_at >= since).map((h: Json) => h.hit_id));
    expectStatus(await http.get(`/v1/detections/${det.detection_id}/hits?limit=0`), 422);
  });
});
