import type { Column, ExportRecord } from './columns.js';

/**
 * RFC 4180: a header row, then one row per record, CRLF line ends; a field holding a quote, comma,
 * CR or LF is quoted with its quotes doubled. Nulls are empty fields; objects and arrays are JSON.
 */
export async function* csvChunks(columns: Column[], batches: AsyncIterable<ExportRecord[]>): AsyncGenerator<Buffer> {
  yield Buffer.from(csvLine(columns.map((c) => c.name)));
  for await (const batch of batches) {
    if (batch.length > 0) yield Buffer.from(batch.map((rec) => csvLine(columns.map((c) => cellText(c.get(rec))))).join(''));
  }
}

export const csvLine = (cells: string[]) => cells.map(csvField).join(',') + '\r\n';

export const csvField = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
