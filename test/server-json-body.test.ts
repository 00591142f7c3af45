/**
 * JSON request bodies: nested past LIMITS.bodyDepth they are refused with a 422 before they are
 * parsed (one 10,000 levels deep in a source's parse_config answered 500); otherwise they are
 * parsed as Fastify does, with malformed JSON a 422 json_invalid and an oversized body a 413.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../src/api/limits.js';
import { nestsDeeperThan } from '../src/engine/ingest/depth.js';
import { useApp } from './helpers/app.js';
import { expectStatus } from './helpers/http.js';

const { t, http } = useApp();

const long = (n: number) => 'a'.repeat(n);
const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);
const json = (path: string, body: string, method = 'POST') => http.call(method, path, { body, contentType: 'application/json' });

beforeAll(async () => {
  expectStatus(await http.post('/v1/admin/datasets', { dataset_id: 'logs' }), 201);
});

describe('JSON bodies', () => {
  it('refuses a body nested 10,000 deep with 422 at loc body naming the limit', async () => {
    const source = `{"dataset_id":"logs","name":"deep","source_key":"deep","source_type":"hosted","parse_config":{"x":${nested(10_000)}}}`;
    const res = await json('/v1/admin/hosted-sources/5', source, 'PUT');
    expectStatus(res, 422);
    expect(res.body.detail).toEqual([{ loc: ['body'], msg: `JSON nested deeper than ${LIMITS.bodyDepth} levels of objects and arrays`, type: 'json_too_deep' }]);
    expectStatus(await json('/v1/admin/datasets', nested(10_000)), 422);
  });

  it('counts only structure: brackets inside strings, escaped quotes included, are text', async () => {
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`, 2)).toBe(false);
    expect(nestsDeeperThan(nested(LIMITS.bodyDepth), LIMITS.bodyDepth)).toBe(false);
    expect(nestsDeeperThan(nested(LIMITS.bodyDepth + 1), LIMITS.bodyDepth)).toBe(true);
    // a body at the limit goes on to validation
    const atLimit = await json('/v1/admin/datasets', `{"dataset_id":"x","extra":${nested(LIMITS.bodyDepth - 1)}}`);
    expectStatus(atLimit, 422);
    expect(atLimit.body.detail[0].type).toBe('extra_forbidden');
  });

  it('keeps malformed JSON a 422 json_invalid, prototype poisoning refused, and a body past LIMITS.bodyBytes a 413', async () => {
    const bad = await json('/v1/admin/datasets', '{"dataset_id": ');
    expectStatus(bad, 422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    expectStatus(await json('/v1/admin/datasets', '{"dataset_id":"p","__proto__":{"x":1}}'), 422);
    const huge = await json('/v1/admin/datasets', `{"dataset_id":"${long(LIMITS.bodyBytes)}"}`);
    expectStatus(huge, 413);
    expect(huge.body.detail).toMatch(String(LIMITS.bodyBytes));
  });

  it('lists every problem of a short body, and only the first of a long one full of wrong items', async () => {
    const short = await http.post('/v1/sql', { sql: 'SELECT 1', params: [{}, [], {}], limit: 'x' });
    expect(expectStatus(short, 422).detail.length).toBeGreaterThan(2);
    const many = await http.post('/v1/sql', { sql: 'SELECT 1', params: Array.from({ length: 150_000 }, () => ({})) });
    const detail = expectStatus(many, 422).detail;
    expect(detail.length).toBeGreaterThanOrEqual(1);
    expect(detail.length).toBeLessThanOrEqual(LIMITS.validationIssues);
  });
});
