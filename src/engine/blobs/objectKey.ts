import { LIMITS } from '../../api/limits.js';
import { newId } from '../ids.js';

/**
 * Longest name segment of a generated key. A file system name holds 255 bytes; the safe name is
 * ASCII, so this leaves room to spare, and a key stays short enough to read in provenance.
 */
export const KEY_NAME_MAX = 100;

// C0 and C1 control characters (NUL included), and the line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * A client's file name as kept in metadata (an upload session's `filename`): its last segment,
 * since the client's folders say nothing about the data, without control characters, at most
 * LIMITS.filename characters; undefined when nothing is left. It is never part of a path.
 */
export function cleanFilename(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const last = capped(name.replace(CONTROL, '').split(/[/\\]/).pop()!.trim(), LIMITS.filename);
  return last === '' ? undefined : last;
}

/** The name cut to `max` characters, its extension kept: the format is chosen by it. */
function capped(name: string, max: number): string {
  if (name.length <= max) return name;
  const ext = /\.[A-Za-z0-9]{1,16}$/.exec(name)?.[0] ?? '';
  return name.slice(0, max - ext.length) + ext;
}

/**
 * The name segment of an object key made from a client's file name: ASCII letters, digits, `_`,
 * `-` and `.` (any other run becomes one `_`), never starting with a dot — so never `.`, `..` or
 * a hidden file — and at most KEY_NAME_MAX characters, its extension kept; `fallback` when
 * nothing usable is left.
 */
export function safeName(filename: string | undefined, fallback: string): string {
  const name = capped((cleanFilename(filename) ?? '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, ''), KEY_NAME_MAX);
  return name === '' ? fallback : name;
}

/**
 * The key of a new object of a source, `<source_key>/<obj id>/<safe name>`: the one place object
 * keys are made, for streamed and uploaded objects alike, so provenance reads the same either way.
 * The id makes it unique; the name only helps a person reading it.
 */
export function newObjectKey(sourceKey: string, filename: string | undefined, fallback = 'stream'): string {
  return `${sourceKey}/${newId('obj')}/${safeName(filename, fallback)}`;
}
