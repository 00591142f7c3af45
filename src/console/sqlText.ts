// Quoting for SQL the console writes itself.
export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
export const sqlIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/** The lines around a record in its own object. */
export function contextSql(dataset: string, sourceKey: string, line: number, around = 5): string {
  const from = Math.max(1, line - around);
  return `SELECT _line, _body FROM ${sqlIdent(dataset)} WHERE _source_key = ${sqlString(sourceKey)} AND _line BETWEEN ${from} AND ${line + around} ORDER BY _line`;
}
