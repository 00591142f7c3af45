import type { Caller } from '../auth/caller.js';
import { LIMITS } from '../../api/limits.js';
import type { Sql } from '../sql/sql.js';
import { sqlParamsOf } from './definition.js';
import type { NewHit } from './rules.js';
import type { StoredDetection } from './stored.js';

/** Who a detection's statement runs as: the tenant itself, reading. */
const asTenant = (t: string): Caller => ({ user_id: 'detection', kind: 'local', tenant_id: t, role: 'Member' });

/**
 * Runs a SQL detection's statement over `(since, until]` (bound as `$since` and `$until` where it
 * names them): every row is a match, and one run with rows fires one hit.
 */
export async function sqlHit(sql: Sql, det: StoredDetection, since: string, until: string): Promise<{ hit: NewHit | null; rows: number }> {
  const values: Record<string, string> = { since, until };
  const named = Object.fromEntries(sqlParamsOf(det.query.sql!).map((p) => [p, values[p]!]));
  const answer = await sql.query(asTenant(det.tenant_id), { sql: det.query.sql!, limit: LIMITS.hitRecords }, named);
  const rows = answer.total.value;
  if (rows === 0) return { hit: null, rows };
  const hit: NewHit = { detection_id: det.detection_id, severity: det.severity, triggered_at: new Date().toISOString(), group_value: null, count: rows, window_start: since, window_end: until, records: answer.records };
  return { hit, rows };
}
