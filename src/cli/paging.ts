import type { OutputFormat, Row } from './output.js';
import { csvText, tableText, tableWidths } from './output.js';
import { aggregationText } from './aggregationTables.js';
import { drained, stdoutClosed } from './stdout.js';

/** What search and SQL answers share: a page of records, the total and the cursor of the next page. */
export interface Paged {
  records: unknown[];
  total: { relation: 'eq' | 'gte'; value: number };
  /** none for a view's records */
  aggregations?: Record<string, unknown>;
  next_cursor: string | null;
}

/** How a command prints its pages: which rows and columns a page holds, what it warns of, what it counts. */
export interface PageShape<E extends Paged> {
  format: OutputFormat;
  /** what the rows are: records, rows, hits */
  noun: string;
  rows: (page: E) => Row[];
  columns: (page: E) => string[];
  warnings: (page: E) => string[];
}

const count = (n: number) => n.toLocaleString('en-US');
const totalOf = ({ total }: Paged, n: (v: number) => string = String) => `${total.relation === 'gte' ? 'at least ' : ''}${n(total.value)}`;

/** What a table leaves out: how many there are, the next page, the aggregations. */
export function footer(page: Paged, printed: number, noun: string, next = page.next_cursor): string {
  const lines = [`${printed} of ${totalOf(page)} ${noun}`];
  if (next) lines.push(`next page: --cursor ${next}`);
  return lines.join('\n') + '\n' + Object.entries(page.aggregations ?? {}).map(([name, agg]) => aggregationText(name, agg)).join('');
}

/** Each warning once, however many pages carry it. */
function warner(): (messages: string[]) => void {
  const said = new Set<string>();
  return (messages) => {
    for (const m of messages) {
      if (said.has(m) || stdoutClosed()) continue;
      said.add(m);
      process.stderr.write(`svc: warning: ${m}\n`);
    }
  };
}

/** One page, as the command always printed it, then what it left out: warnings, and the rest of the answer when there is more. */
export async function printPage<E extends Paged>(page: E, shape: PageShape<E>, emit: (value: unknown, list: { rows: Row[]; columns: string[] }) => Promise<void>): Promise<void> {
  const rows = shape.rows(page);
  await emit(page, { rows, columns: shape.columns(page) });
  await drained();
  if (stdoutClosed()) return;
  warner()(shape.warnings(page));
  if (shape.format === 'table') process.stdout.write(footer(page, rows.length, shape.noun));
  else if (page.next_cursor) {
    // a pipe must not lose results unsaid: name what was left and how to get it
    process.stderr.write(`svc: ${count(rows.length)} of ${totalOf(page, count)} ${shape.noun} printed; add --all for every one, or --cursor ${page.next_cursor} for the next page\n`);
  }
}

/**
 * --all: page after page from `cursor` on, each written before the next is fetched, so that memory
 * holds one page; ndjson one row a line, csv one header, json one array, a table one header.
 * Stops fetching once stdout has closed.
 */
export async function printAll<E extends Paged>(fetch: (cursor: string | undefined) => Promise<E>, cursor: string | undefined, shape: PageShape<E>): Promise<void> {
  const out = process.stdout;
  const warn = warner();
  let page: E;
  let printed = 0;
  let widths: number[] | undefined;
  // the first page's columns are the header's: every later row is printed under them
  let columns: string[] | undefined;
  for (let n = 0; ; n++) {
    page = await fetch(cursor);
    if (stdoutClosed()) return;
    const rows = shape.rows(page);
    columns ??= shape.columns(page);
    const first = n === 0;
    if (shape.format === 'ndjson') out.write(rows.map((r) => JSON.stringify(r) + '\n').join(''));
    else if (shape.format === 'json') out.write((first ? '[' : '') + rows.map((r, i) => (printed + i === 0 ? '\n' : ',\n') + JSON.stringify(r)).join(''));
    else if (shape.format === 'csv') out.write(await csvText(rows, columns, first));
    else out.write(tableText(rows, columns, (widths ??= tableWidths(rows, columns)), first));
    printed += rows.length;
    cursor = page.next_cursor ?? undefined;
    await drained(out);
    warn(shape.warnings(page));
    if (!cursor || stdoutClosed()) break;
  }
  if (stdoutClosed()) return;
  if (shape.format === 'json') out.write(printed ? '\n]\n' : ']\n');
  if (shape.format === 'table') out.write(footer(page, printed, shape.noun, null));
}

/** A list (views, exports) that has more than it printed says so on stderr, unless its JSON carries the cursor. */
export function sayMore(format: OutputFormat, noun: string, next: string | null): void {
  if (next && format !== 'json' && !stdoutClosed()) process.stderr.write(`svc: more ${noun}: --cursor ${next} for the next page\n`);
}
