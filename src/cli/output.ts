import { format as csvFormat } from 'fast-csv';

export type OutputFormat = 'table' | 'json' | 'ndjson' | 'csv';
export const OUTPUT_FORMATS: OutputFormat[] = ['table', 'json', 'ndjson', 'csv'];

/** --output wins, --json means json; else a table on a terminal and JSON for pipes. */
export function outputFormat(opts: { output?: string; json?: boolean }, isTTY = Boolean(process.stdout.isTTY)): OutputFormat {
  if (opts.output) return opts.output as OutputFormat;
  if (opts.json) return 'json';
  return isTTY ? 'table' : 'json';
}

type Row = Record<string, unknown>;

/** A column may name a nested member: `provenance.line` (unless the row has a member of that very name). */
const pick = (row: Row, column: string): unknown => Object.hasOwn(row, column) ? row[column] : column.split('.').reduce<unknown>((v, k) => (v == null ? undefined : (v as Row)[k]), row);

const cell = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function table(rows: Row[], columns: string[]): string {
  const widths = columns.map((c) => Math.min(60, Math.max(c.length, ...rows.map((r) => cell(pick(r, c)).length))));
  const line = (values: string[]) => values.map((v, i) => (v.length > widths[i] ? v.slice(0, widths[i] - 1) + '…' : v.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(columns.map((c) => c.split('.').pop()!.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(pick(r, c)).replace(/\s+/g, ' '))))].join('\n') + '\n';
}

async function csv(rows: Row[], columns: string[], out: NodeJS.WritableStream): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const stream = csvFormat({ headers: columns, includeEndRowDelimiter: true }); // a text file ends with a newline
    stream.on('error', reject).on('end', resolve);
    stream.pipe(out, { end: false });
    for (const r of rows) stream.write(Object.fromEntries(columns.map((c) => [c, cell(pick(r, c))])));
    stream.end();
  });
}

/**
 * Writes a command's result. `value` is the whole answer (json); `rows` are its items (one a line in
 * ndjson, one a row in table and csv) with `columns` chosen for the table and csv.
 */
export async function emit(fmt: OutputFormat, value: unknown, list?: { rows: Row[]; columns: string[] }, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const rows = list?.rows ?? [value as Row];
  const columns = list?.columns ?? Object.keys(value as Row);
  if (fmt === 'json') out.write(JSON.stringify(value, null, 2) + '\n');
  else if (fmt === 'ndjson') out.write(rows.map((r) => JSON.stringify(r) + '\n').join(''));
  else if (fmt === 'csv') await csv(rows, columns, out);
  else if (list) out.write(table(rows, columns));
  else out.write(Object.entries(value as Row).map(([k, v]) => `${k}: ${cell(v)}`).join('\n') + '\n');
}
