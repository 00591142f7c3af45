/** The value at a dotted path (`data.items`) of a parsed JSON value; undefined when any step is missing. */
export function valueAtPath(value: unknown, path: string): unknown {
  let at = value;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * Whether a parsed value nests deeper than `limit`, counted as depth.ts counts text: the record's
 * own object is level 1. The walk stops at the limit, so a hostile value never costs more stack.
 */
export function deeperThan(value: unknown, limit: number, level = 1): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (level > limit) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    if (deeperThan(v, limit, level + 1)) return true;
  }
  return false;
}
