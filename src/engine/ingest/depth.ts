import { LIMITS } from '../../api/limits.js';

/**
 * How deep a record may nest, and how levels are counted: the record's own object is level 1,
 * and every object or array inside a value adds one. `{"a":1}` is 1 level, `{"a":{"b":1}}` and
 * `{"a":[1]}` are 2, `{"a":[{"b":1}]}` is 3. Brackets inside strings do not count.
 */
export const DEPTH_LIMIT = LIMITS.recordDepth;
export const TOO_DEEP = `nested deeper than the limit of ${DEPTH_LIMIT} levels of objects and arrays`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `limit`, found in one pass over the text and before
 * JSON.parse builds anything: a 1 MiB line of `[[[[…` stops at its 21st byte. String contents
 * are skipped with indexOf. Text that is not valid JSON gets an answer too; JSON.parse then
 * reports what is wrong with it.
 */
export function nestsDeeperThan(text: string, limit: number = DEPTH_LIMIT): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return false;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote closing the string opened at `open`, or -1 when it is never closed. */
function closingQuote(text: string, open: number): number {
  let q = text.indexOf('"', open + 1);
  while (q !== -1) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
  return -1;
}
