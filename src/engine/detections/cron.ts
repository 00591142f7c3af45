import { Cron } from 'croner';

const DEFAULT_ZONE = 'UTC';

/** A paused schedule: croner would otherwise start a timer, and the job queue does the waking here. */
const schedule = (cron: string, timezone: string | null | undefined) => new Cron(cron, { timezone: timezone ?? DEFAULT_ZONE, paused: true });

/** Why a detection's cron or time zone cannot schedule it, in one line; null when both are valid. */
export function cronIssue(cron: string, timezone: string | null | undefined): string | null {
  if (timezone) {
    try {
      new Intl.DateTimeFormat(undefined, { timeZone: timezone });
    } catch {
      return `unknown time zone '${timezone}'`;
    }
  }
  try {
    schedule(cron, timezone);
  } catch (err) {
    const reason = ((err as Error).message ?? String(err)).replace(/^CronPattern:\s*/, '').split('\n')[0];
    return `invalid cron expression '${cron}': ${reason}`;
  }
  return null;
}

/**
 * The first run strictly after `afterMs` (epoch ms), in the detection's zone (UTC by default), or
 * null when the expression never fires again. A local time that a DST change skips or repeats runs
 * once: croner moves a skipped time to the first valid one and takes the first of a repeated hour.
 */
export function nextRunAfter(cron: string, timezone: string | null | undefined, afterMs: number): number | null {
  // croner steps on from the whole second after `afterMs`: a run at `afterMs` itself is the previous one
  return schedule(cron, timezone).nextRun(new Date(afterMs))?.getTime() ?? null;
}
