import { describe, expect, it } from 'vitest';
import { cronIssue, nextRunAfter } from '../src/engine/detections/cron.js';

const NY = 'America/New_York';
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** The local date (YYYY-MM-DD) of an instant in a zone. */
const localDate = (ms: number, timeZone: string) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

/** Every run from `fromIso` to `toIso`, stepping run by run. */
function runs(cron: string, tz: string, fromIso: string, toIso: string): number[] {
  const out: number[] = [];
  for (let at = nextRunAfter(cron, tz, Date.parse(fromIso)); at !== null && at < Date.parse(toIso); at = nextRunAfter(cron, tz, at)) out.push(at);
  return out;
}

describe('detection schedules', () => {
  it('accepts valid expressions and zones, and says why others are refused', () => {
    expect(cronIssue('*/5 * * * *', null)).toBeNull();
    expect(cronIssue('0 30 9 * * 1-5', NY)).toBeNull();
    expect(cronIssue('61 * * * *', 'UTC')).toMatch(/^invalid cron expression '61 \* \* \* \*': .*minute/);
    expect(cronIssue('every day', undefined)).toMatch(/^invalid cron expression/);
    expect(cronIssue('* * * * *', 'Mars/Olympus_Mons')).toBe("unknown time zone 'Mars/Olympus_Mons'");
    for (const reason of [cronIssue('nope', null), cronIssue('* * * * *', 'Nowhere')]) expect(reason).not.toContain('\n');
  });

  it('gives the first run strictly after a time, in UTC by default', () => {
    expect(iso(nextRunAfter('0 * * * *', undefined, Date.parse('2026-01-01T10:15:00Z')))).toBe('2026-01-01T11:00:00.000Z');
    // a run at the time itself is not after it
    expect(iso(nextRunAfter('0 * * * *', null, Date.parse('2026-01-01T11:00:00Z')))).toBe('2026-01-01T12:00:00.000Z');
    expect(iso(nextRunAfter('30 9 * * *', 'UTC', Date.parse('2026-01-01T09:29:59.999Z')))).toBe('2026-01-01T09:30:00.000Z');
    expect(iso(nextRunAfter('30 9 * * *', NY, Date.parse('2026-01-01T00:00:00Z')))).toBe('2026-01-01T14:30:00.000Z'); // EST
  });

  it('runs once on the day a repeated hour comes back (fall back)', () => {
    const all = runs('30 1 * * *', NY, '2026-10-31T00:00:00Z', '2026-11-04T00:00:00Z');
    const nov1 = all.filter((ms) => localDate(ms, NY) === '2026-11-01');
    expect(nov1.map(iso)).toEqual(['2026-11-01T05:30:00.000Z']); // 01:30 EDT, the first of the two
    expect(all.map(iso)).toEqual(['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z', '2026-11-03T06:30:00.000Z']);
  });

  it('runs once on the day a skipped hour never comes (spring forward)', () => {
    const all = runs('30 2 * * *', NY, '2027-03-12T00:00:00Z', '2027-03-17T00:00:00Z');
    const days = all.map((ms) => localDate(ms, NY));
    expect(days.filter((d) => d === '2027-03-14')).toHaveLength(1);
    expect(new Set(days).size).toBe(days.length); // no day twice
    expect(days).toEqual(['2027-03-12', '2027-03-13', '2027-03-14', '2027-03-15', '2027-03-16']);
  });

  it('steps forward: consecutive runs strictly increase', () => {
    for (const [cron, tz] of [['*/7 * * * *', 'UTC'], ['0 */3 * * *', NY], ['15 1,2,3 * * *', NY], ['0 */20 * * * *', 'Australia/Lord_Howe']] as const) {
      const all = runs(cron, tz, '2026-10-30T00:00:00Z', '2026-11-03T00:00:00Z');
      expect(all.length).toBeGreaterThan(3);
      for (let i = 1; i < all.length; i++) expect(all[i]).toBeGreaterThan(all[i - 1]);
    }
  });
});
