/**
 * The time a plain text log line carries, read where logs put it: at the start of the line, after a
 * syslog priority (`<34>`), or after a first token (BGL's label, OpenStack's file name); an access
 * log's `[10/Oct/2000:13:55:36 -0700]` anywhere in the line. A source may name the one format its
 * lines use (`parse_config.time_format`): a name below, or a strftime-like pattern.
 *
 * Every regex is sticky (tried at one offset) or starts with a literal, and has bounded
 * quantifiers only: a line costs a few failed first-character checks when it carries no time.
 */

/** A line's time as ISO 8601 UTC, or null when it carries none that the reader knows. */
export type LineTime = (line: string) => string | null;

/** Named formats `parse_config.time_format` accepts; `auto` (the default) tries them all. */
export const TIME_FORMAT_NAMES = ['auto', 'none', 'iso8601', 'rfc3164', 'clf', 'apache_error', 'hdfs', 'epoch'] as const;
export type TimeFormatName = (typeof TIME_FORMAT_NAMES)[number];

const MAX_PATTERN = 64;
const DAY_MS = 86_400_000;
/** how far the first token before a time may reach (BGL's `-`, OpenStack's file name) */
const MAX_LABEL = 64;

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };
const DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** 0..11 for a month name or its first three letters (any case); -1 when none. */
function monthOf(name: string): number {
  return MONTHS[name.slice(0, 3).toLowerCase()] ?? -1;
}

/** Milliseconds of a fraction of a second given by its digits ("5" → 500, "008" → 8). */
function fracMs(digits: string | undefined): number {
  if (!digits) return 0;
  return digits.length >= 3 ? Number(digits.slice(0, 3)) : Number(digits) * (digits.length === 1 ? 100 : 10);
}

/** Minutes east of UTC for `Z`, `UTC`, `GMT`, `+hh`, `+hhmm`, `+hh:mm`; NaN when unreadable. */
function offsetMin(zone: string | undefined): number {
  if (!zone || zone === 'Z' || zone === 'z' || zone === 'UTC' || zone === 'GMT') return 0;
  const sign = zone.charCodeAt(0) === 45 ? -1 : 1; // '-'
  const h = Number(zone.slice(1, 3));
  const m = zone.length > 3 ? Number(zone.slice(-2)) : 0;
  return h > 23 || m > 59 ? NaN : sign * (h * 60 + m);
}

/** Epoch ms of a calendar time (month 0-based) read at `zone`; NaN when a field is out of range. */
function utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, zone: number): number {
  if (y < 1000 || mo < 0 || mo > 11 || d < 1 || d > DAYS_IN[mo] || h > 23 || mi > 59 || s > 60) return NaN;
  if (mo === 1 && d === 29 && !(y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0))) return NaN;
  return Date.UTC(y, mo, d, h, mi, Math.min(s, 59), ms) - zone * 60_000;
}

/**
 * A time that names no year (syslog's `Nov 22 07:00:00`): the year that puts it closest to the
 * ingest time without being more than a day after it (a day covers clocks ahead and zones east).
 */
function inferYear(mo: number, d: number, h: number, mi: number, s: number, ms: number, zone: number, now: number): number {
  const year = new Date(now).getUTCFullYear();
  // latest first: the first candidate not past now + 1 day is the closest; Feb 29 looks back to a leap year
  for (let y = year + 1; y >= year - 8; y--) {
    const t = utc(y, mo, d, h, mi, s, ms, zone);
    if (t <= now + DAY_MS) return t;
  }
  return NaN;
}

const yy = (two: string) => {
  const n = Number(two);
  return n < 69 ? 2000 + n : 1900 + n; // POSIX %y
};

/** One format: whether a line may hold it where `c` is the character code, and its time there (epoch ms, NaN when none). */
interface Reader {
  name: TimeFormatName;
  first: (c: number) => boolean;
  read: (line: string, at: number, now: number) => number;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isUpper = (c: number) => c >= 65 && c <= 90;
const BRACKET = 91; // '['

/** Runs a sticky regex at `at`. */
function execAt(re: RegExp, line: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(line);
}

// 2024-05-16T00:00:00.008Z, 2017-05-16 00:00:00.008, 2024/01/02 03:04:05 +0000, [2024-01-02 03:04:05,123]
const ISO = /\[?(\d{4})([-/])(\d{2})\2(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:(Z|[+-]\d{2}(?::?\d{2})?)| ([+-]\d{2}:?\d{2}|UTC|GMT)(?![\w:]))?(?!\d)/y;
// 081109 203615 (HDFS: yyMMdd HHmmss)
const HDFS = /(\d{2})(\d{2})(\d{2}) (\d{2})(\d{2})(\d{2})(?!\d)/y;
// 1117838570, 1117838570.123, 1700000000000
const EPOCH = /(\d{13}|\d{10})(?:\.(\d{1,9}))?(?![\d.])/y;
// Nov 22 07:00:00, Jul  1 00:21:28 (RFC 3164)
const SYSLOG = /([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?!\d)/y;
// [Sun Dec 04 04:47:44 2005], [Fri Sep 09 10:42:29.902022 2011], Sun Dec  4 04:47:44 2005
const CTIME = /\[?[A-Z][a-z]{2} ([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))? (\d{4})(?!\d)/y;
// [10/Oct/2000:13:55:36 -0700]
const CLF_SOURCE = String.raw`\[(\d{2})/([A-Z][a-z]{2})/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?: ([+-]\d{4}))?\]`;
const CLF_AT = new RegExp(CLF_SOURCE, 'y');
const CLF_ANYWHERE = new RegExp(CLF_SOURCE);

const READERS: Reader[] = [
  {
    name: 'iso8601',
    first: (c) => isDigit(c) || c === BRACKET,
    read: (line, at) => {
      const m = execAt(ISO, line, at);
      if (!m) return NaN;
      const zone = offsetMin(m[9] ?? m[10]);
      return utc(+m[1], +m[3] - 1, +m[4], +m[5], +m[6], m[7] ? +m[7] : 0, fracMs(m[8]), zone);
    },
  },
  {
    name: 'hdfs',
    first: isDigit,
    read: (line, at) => {
      const m = execAt(HDFS, line, at);
      return m ? utc(yy(m[1]), +m[2] - 1, +m[3], +m[4], +m[5], +m[6], 0, 0) : NaN;
    },
  },
  {
    name: 'epoch',
    first: isDigit,
    read: (line, at) => {
      const m = execAt(EPOCH, line, at);
      if (!m) return NaN;
      return m[1].length === 13 ? +m[1] : +m[1] * 1000 + fracMs(m[2]);
    },
  },
  {
    name: 'rfc3164',
    first: isUpper,
    read: (line, at, now) => {
      const m = execAt(SYSLOG, line, at);
      if (!m) return NaN;
      const mo = monthOf(m[1]);
      return mo < 0 ? NaN : inferYear(mo, +m[2], +m[3], +m[4], +m[5], fracMs(m[6]), 0, now);
    },
  },
  {
    name: 'apache_error',
    first: (c) => isUpper(c) || c === BRACKET,
    read: (line, at) => {
      const m = execAt(CTIME, line, at);
      if (!m) return NaN;
      const mo = monthOf(m[1]);
      return mo < 0 ? NaN : utc(+m[7], mo, +m[2], +m[3], +m[4], +m[5], fracMs(m[6]), 0);
    },
  },
  {
    name: 'clf',
    first: (c) => c === BRACKET,
    read: (line, at) => clfTime(execAt(CLF_AT, line, at)),
  },
];

function clfTime(m: RegExpExecArray | null): number {
  if (!m) return NaN;
  const mo = monthOf(m[2]);
  return mo < 0 ? NaN : utc(+m[3], mo, +m[1], +m[4], +m[5], +m[6], 0, offsetMin(m[7]));
}

const PRIORITY = /<\d{1,3}>(?:\d{1,2} )?/y;

function iso(ms: number): string | null {
  if (!Number.isFinite(ms)) return null;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/**
 * The reader of a run's text lines. `format` is a name from TIME_FORMAT_NAMES or a pattern (see
 * compilePattern); `now` is the ingest time in epoch ms, which a time without a year is read near.
 * Call checkTimeFormat first: an unknown format throws.
 */
export function makeLineTime(format: string | null | undefined, now: number): LineTime {
  const name = format || 'auto';
  if (name === 'none') return () => null;
  if (!(TIME_FORMAT_NAMES as readonly string[]).includes(name)) {
    const pattern = compilePattern(name);
    if (typeof pattern === 'string') throw new Error(pattern);
    return (line) => iso(pattern(line, now));
  }
  const readers = name === 'auto' ? READERS : READERS.filter((r) => r.name === name);
  const searchClf = name === 'auto' || name === 'clf';

  const at = (line: string, i: number): number => {
    const c = line.charCodeAt(i);
    for (const r of readers) {
      if (!r.first(c)) continue;
      const t = r.read(line, i, now);
      if (t === t) return t; // not NaN
    }
    return NaN;
  };

  return (line) => {
    let start = 0;
    if (line.charCodeAt(0) === 60) { // '<': a syslog priority, perhaps with RFC 5424's version
      PRIORITY.lastIndex = 0;
      if (PRIORITY.test(line)) start = PRIORITY.lastIndex;
    }
    let t = at(line, start);
    if (t !== t) {
      const space = line.indexOf(' ', start);
      if (space > start && space - start <= MAX_LABEL) t = at(line, space + 1);
    }
    if (t !== t && searchClf) t = clfTime(CLF_ANYWHERE.exec(line));
    return iso(t);
  };
}

/** Null when `format` is a name or a valid pattern, else why it is not. */
export function checkTimeFormat(format: unknown): string | null {
  if (typeof format !== 'string') return 'time_format must be a string';
  if ((TIME_FORMAT_NAMES as readonly string[]).includes(format)) return null;
  if (!format.includes('%')) return `time_format must be one of ${TIME_FORMAT_NAMES.join(', ')} or a pattern with % directives (got '${format}')`;
  const compiled = compilePattern(format);
  return typeof compiled === 'string' ? compiled : null;
}

type Field = 'Y' | 'y' | 'm' | 'b' | 'd' | 'H' | 'M' | 'S' | 'f' | 'z' | 's';

/** What each directive matches and the field it sets (none: matched and ignored). */
const DIRECTIVES: Record<string, { re: string; field?: Field }> = {
  Y: { re: '(\\d{4})', field: 'Y' },
  y: { re: '(\\d{2})', field: 'y' },
  m: { re: '(\\d{2})', field: 'm' },
  b: { re: '([A-Za-z]{3})', field: 'b' },
  h: { re: '([A-Za-z]{3})', field: 'b' },
  B: { re: '([A-Za-z]{3,9})', field: 'b' },
  d: { re: '(\\d{2})', field: 'd' },
  e: { re: '([ \\d]\\d)', field: 'd' },
  H: { re: '(\\d{2})', field: 'H' },
  M: { re: '(\\d{2})', field: 'M' },
  S: { re: '(\\d{2})', field: 'S' },
  f: { re: '(\\d{1,9})', field: 'f' },
  z: { re: '(Z|[+-]\\d{2}(?::?\\d{2})?)', field: 'z' },
  s: { re: '(\\d{1,12})', field: 's' },
  a: { re: '[A-Za-z]{3}' },
  A: { re: '[A-Za-z]{6,9}' },
};
const SHORTHANDS: Record<string, string> = { T: '%H:%M:%S', F: '%Y-%m-%d' };

/**
 * A strftime-like pattern as a reader of the first place in a line it matches, or why it is refused.
 * Directives: %Y %y %m %b %h %B %d %e %H %M %S %f %z %s %a %A %T %F %%; any other character is
 * itself. The pattern needs a day and a month (or %s); a time without a year is read near `now`
 * like syslog's, one without a zone as UTC.
 */
export function compilePattern(pattern: string): ((line: string, now: number) => number) | string {
  if (pattern.length > MAX_PATTERN) return `time_format is longer than ${MAX_PATTERN} characters`;
  const expanded = pattern.replace(/%([%TF])/g, (all, k: string) => SHORTHANDS[k] ?? all);
  const fields: Field[] = [];
  let source = '';
  for (let i = 0; i < expanded.length; i++) {
    const ch = expanded[i];
    if (ch !== '%') {
      source += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
      continue;
    }
    const k = expanded[++i];
    if (k === undefined) return "time_format ends with a lone '%'";
    if (k === '%') {
      source += '%';
      continue;
    }
    const d = DIRECTIVES[k];
    if (!d) return `time_format has an unknown directive '%${k}'`;
    if (d.field) {
      if (fields.includes(d.field)) return `time_format names a field twice ('%${k}')`;
      fields.push(d.field);
    }
    source += d.re;
  }
  const has = (f: Field) => fields.includes(f);
  if (has('s')) {
    if (fields.length > (has('f') ? 2 : 1)) return 'time_format with %s can only add %f';
  } else {
    if (!has('d') || !(has('m') || has('b'))) return 'time_format needs a day (%d or %e) and a month (%m, %b or %B), or %s';
    if (has('Y') && has('y')) return 'time_format names the year twice (%Y and %y)';
  }
  const re = new RegExp(source);
  const group = (f: Field) => fields.indexOf(f) + 1;
  const [gY, gy, gm, gb, gd, gH, gM, gS, gf, gz, gs] = (['Y', 'y', 'm', 'b', 'd', 'H', 'M', 'S', 'f', 'z', 's'] as Field[]).map(group);
  return (line, now) => {
    const m = re.exec(line);
    if (!m) return NaN;
    if (gs) return +m[gs] * 1000 + (gf ? fracMs(m[gf]) : 0);
    const mo = gm ? +m[gm] - 1 : monthOf(m[gb]);
    if (mo < 0) return NaN;
    const zone = gz ? offsetMin(m[gz]) : 0;
    const args = [+m[gd], gH ? +m[gH] : 0, gM ? +m[gM] : 0, gS ? +m[gS] : 0, gf ? fracMs(m[gf]) : 0] as const;
    if (gY || gy) return utc(gY ? +m[gY] : yy(m[gy]), mo, ...args, zone);
    return inferYear(mo, ...args, zone, now);
  };
}
