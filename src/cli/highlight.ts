/**
 * Snippets mark matched words with `<em>…</em>`. In a table they become two control characters that
 * take no width, so a cell can be measured and cut as plain text; only once it is cut does each
 * become colour (on a terminal) or nothing. JSON and NDJSON keep the tags: they are the API's shape.
 */
export const MARK_ON = '\u0001';
export const MARK_OFF = '\u0002';

const BOLD_RED = '\x1b[1;31m';
const RESET = '\x1b[0m';

/** The tags as marks, for a table cell. */
export const marked = (snippet: string): string => snippet.replace(/<em>/g, MARK_ON).replace(/<\/em>/g, MARK_OFF);

/** The tags gone, for CSV. */
export const untagged = (snippet: string): string => snippet.replace(/<\/?em>/g, '');

/** How many columns a cell takes on screen: its marks take none. */
export const visibleLength = (text: string): number => text.replace(/[\u0001\u0002]/g, '').length;

/** The first `width` visible characters, marks kept (a cut cell ends with … in its last column). */
export function cutVisible(text: string, width: number): string {
  if (visibleLength(text) <= width) return text;
  let out = '';
  let seen = 0;
  for (const ch of text) {
    if (ch === MARK_ON || ch === MARK_OFF) out += ch;
    else if (seen++ < width - 1) out += ch;
  }
  return out.replace(/[\u0001\u0002]*$/, '') + '…';
}

/** Marks as colour, or as nothing; a highlight cut open is closed at the end of its cell. */
export function paint(text: string, colour: boolean): string {
  if (!colour) return text.replace(/[\u0001\u0002]/g, '');
  let open = false;
  const painted = text.replace(/[\u0001\u0002]/g, (m) => ((open = m === MARK_ON) ? BOLD_RED : RESET));
  return open ? painted + RESET : painted;
}
