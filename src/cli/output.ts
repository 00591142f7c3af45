import { fitWidths } from './fit.js';
import { cutVisible, paint, visibleLength } from './highlight.js';
import { colourAllowed, terminalWidth } from './terminal.js';

export type OutputFormat = 'table' | 'json' | 'ndjson' | 'csv';
export const OUTPUT_FORMATS: OutputFormat[] = ['table', 'json', 'ndjson', 'csv'];

/** --output wins, --json means json; else a table on a terminal and JSON for pipes. */
export function outputFormat(opts: { output?: string; json?: boolean }, isTTY = Boolean(process.stdout.isTTY)): OutputFormat {
  if (opts.output) return opts.output as OutputFormat;
  if (opts.json) return 'json';
  return isTTY ? 'table' : 'json';
}

export type Row = Record<string, unknown>;

/** A column may name a nested member: `provenance.line` (unless the row has a member of that very name). */
const pick = (row: Row, column: string): unknown => Object.hasOwn(row, column) ? row[column] : column.split('.').reduce<unknown>((v, k) => (v == null ? undefined : (v as Row)[k]), row);

const cell = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** A table shows a score and the like to 3 decimals; CSV and JSON keep every digit. */
const tableCell = (v: unknown): string => (typeof v === 'number' && !Number.isInteger(v) ? String(Math.round(v * 1000) / 1000) : cell(v)).replace(/\s+/g, ' ');

/** How a table is drawn: fitted to a terminal `width` (none: a pipe, columns capped at 60), highlights in colour or not. */
export interface TableStyle { width?: number; colour: boolean }
export const terminalStyle = (): TableStyle => ({ width: terminalWidth(), colour: colourAllowed() });

const header = (column: string) => column.split('.').pop()!.toUpperCase();

/** Column widths for these rows: a long body is cut, not the table widened; on a terminal, cut to fit it. */
export function tableWidths(rows: Row[], columns: string[], style: TableStyle = terminalStyle()): number[] {
  const natural = columns.map((c) => Math.max(header(c).length, ...rows.map((r) => visibleLength(tableCell(pick(r, c))))));
  if (style.width === undefined) return natural.map((w, i) => Math.min(Math.max(60, header(columns[i]).length), w));
  return fitWidths(natural, columns.map((c) => header(c).length), style.width);
}

/** Rows as table lines in the given widths, under a header line when `withHeader` is set. */
export function tableText(rows: Row[], columns: string[], widths?: number[], withHeader = true, style: TableStyle = terminalStyle()): string {
  const ws = widths ?? tableWidths(rows, columns, style);
  const line = (values: string[]) => values.map((v, i) => paint(cutVisible(v, ws[i]), style.colour) + ' '.repeat(Math.max(0, ws[i] - visibleLength(v)))).join('  ').trimEnd();
  const lines = rows.map((r) => line(columns.map((c) => tableCell(pick(r, c)))));
  if (withHeader) lines.unshift(line(columns.map(header)));
  return lines.length ? lines.join('\n') + '\n' : '';
}

/** Rows as CSV lines, a text file's way (each ending with a newline), under the header when `header` is set. */
export const csvText = async (rows: Row[], columns: string[], header = true): Promise<string> => {
  if (!header && rows.length === 0) return '';
  const { writeToString } = await import('fast-csv'); // loaded when first used: most output is not CSV
  return writeToString(rows.map((r) => Object.fromEntries(columns.map((c) => [c, cell(pick(r, c))]))), { headers: columns, writeHeaders: header, alwaysWriteHeaders: header, includeEndRowDelimiter: true });
};

/**
 * Writes a command's result. `value` is the whole answer (json); `rows` are its items (one a line in
 * ndjson, one a row in table and csv) with `columns` chosen for the table and csv.
 */
export async function emit(fmt: OutputFormat, value: unknown, list?: { rows: Row[]; columns: string[] }, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  const rows = list?.rows ?? [value as Row];
  const columns = list?.columns ?? Object.keys(value as Row);
  if (fmt === 'json') out.write(JSON.stringify(value, null, 2) + '\n');
  else if (fmt === 'ndjson') out.write(rows.map((r) => JSON.stringify(r) + '\n').join(''));
  else if (fmt === 'csv') out.write(await csvText(rows, columns));
  else if (list) out.write(tableText(rows, columns));
  else out.write(Object.entries(value as Row).map(([k, v]) => `${k}: ${cell(v)}`).join('\n') + '\n');
}
