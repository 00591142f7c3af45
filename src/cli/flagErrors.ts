import type { Command } from 'commander';
import { Invalid } from '../engine/errors.js';

/** Request members whose flag is not their name in kebab case. */
const FLAG_OF: Record<string, string> = {
  datasets: '--dataset',
  dataset_id: '--dataset',
  aggregations: '--agg',
  semantic_min_score: '--min-score',
  params: '--param',
  time: '--last',
};

/** The member a problem is about: `['body', 'limit']`, `['query', 'limit']`, `['where', 0, 'op']` → limit, where. */
const memberOf = (loc: unknown[] = []): string | undefined => {
  const member = ['body', 'query', 'path'].includes(String(loc[0])) ? loc[1] : loc[0];
  return typeof member === 'string' ? member : undefined;
};

/**
 * A request a command built from flags, refused for one of its members, is told in the user's
 * words: `--limit: must be <= 1000` rather than `body.limit: …`. Only a flag the command has is
 * named; any other problem keeps its message.
 */
export function flagMessage(err: unknown, cmd: Command | undefined): string | undefined {
  if (!(err instanceof Invalid) || !cmd) return undefined;
  const longs = new Set(cmd.options.map((o) => o.long));
  const named = err.issues.map((issue) => {
    const member = memberOf(issue.loc);
    const flag = member && (FLAG_OF[member] ?? `--${member.replace(/_/g, '-')}`);
    return flag && longs.has(flag) ? `${flag}: ${issue.msg}` : undefined;
  });
  return named.length > 0 && named.every(Boolean) ? named.join('; ') : undefined;
}
