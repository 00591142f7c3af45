/**
 * Lucene wildcards (`*` any run, `?` one character, `\` escapes the next) matched without a
 * regular expression: `^a.*a.*a.*b$` backtracks polynomially on long values, while matching
 * the pieces between stars leftmost-first is exact for globs and never goes back.
 */
export type Glob = (value: string) => boolean;

/** One stretch between stars; `any[k]` marks a `?` at offset k. */
interface Piece {
  text: string;
  any: boolean[] | null;
}

/** A case-insensitive matcher of whole values against `pattern`. */
export function globMatcher(pattern: string): Glob {
  const pieces = split(pattern.toLowerCase());
  if (pieces.length === 1) {
    const only = pieces[0];
    return (value) => {
      const s = value.toLowerCase();
      return s.length === only.text.length && matchesAt(s, 0, only);
    };
  }
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  const middle = pieces.slice(1, -1).filter((p) => p.text.length > 0);
  return (value) => {
    const s = value.toLowerCase();
    const end = s.length - last.text.length;
    if (end < first.text.length || !matchesAt(s, 0, first) || !matchesAt(s, end, last)) return false;
    let from = first.text.length;
    for (const piece of middle) {
      const at = find(s, piece, from, end);
      if (at < 0) return false;
      from = at + piece.text.length;
    }
    return true;
  };
}

/** Whether `word` (as typed, escapes included) holds an unescaped `*` or `?`. */
export function hasWildcard(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word[i];
    if (c === '\\') i++;
    else if (c === '*' || c === '?') return true;
  }
  return false;
}

function split(pattern: string): Piece[] {
  const pieces: Piece[] = [];
  let text = '';
  let any: boolean[] | null = null;
  for (let i = 0; i < pattern.length; i++) {
    let c = pattern[i];
    if (c === '*') {
      pieces.push({ text, any });
      text = '';
      any = null;
      continue;
    }
    if (c === '?') (any ??= [])[text.length] = true;
    else if (c === '\\' && i + 1 < pattern.length) c = pattern[++i];
    text += c;
  }
  pieces.push({ text, any });
  return pieces;
}

function matchesAt(s: string, at: number, piece: Piece): boolean {
  const { text, any } = piece;
  if (any === null) return s.startsWith(text, at);
  for (let k = 0; k < text.length; k++) {
    if (!any[k] && s.charCodeAt(at + k) !== text.charCodeAt(k)) return false;
  }
  return true;
}

/** The leftmost offset in [from, end - piece length] where `piece` matches, or -1. */
function find(s: string, piece: Piece, from: number, end: number): number {
  const limit = end - piece.text.length;
  if (piece.any === null) {
    const at = s.indexOf(piece.text, from);
    return at >= 0 && at <= limit ? at : -1;
  }
  for (let at = from; at <= limit; at++) if (matchesAt(s, at, piece)) return at;
  return -1;
}
