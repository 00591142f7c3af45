import { Invalid } from '../errors.js';
import { decodeCursor } from '../search/handles.js';

const VIEW_ID = /^view_[0-9a-z]{26}$/;

const invalid = (cursor: string, msg: string) => new Invalid(msg, [{ loc: ['query', 'cursor'], msg, type: 'value_error', input: cursor.slice(0, 256) }]);

/** A page of the view list goes on after the last view it showed (ids sort by creation). */
export function listCursor(cursor: string): string {
  if (!VIEW_ID.test(cursor)) throw invalid(cursor, 'malformed cursor');
  return cursor;
}

/**
 * A records cursor names its view, then where it goes on: `m<pos>`, the next position of a
 * materialized view (positions stay put when deletions take records out); `l<search cursor>`, the
 * next page of a live view's one run. A cursor of another view, or a bare search cursor, is refused.
 */
export const recordsCursor = {
  materialized: (viewId: string, pos: number) => `${viewId}.m${pos}`,
  live: (viewId: string, searchCursor: string) => `${viewId}.l${searchCursor}`,

  position(cursor: string, viewId: string): number {
    const rest = ofView(cursor, viewId, 'm');
    if (!/^\d{1,15}$/.test(rest)) throw invalid(cursor, 'malformed cursor');
    return Number(rest);
  },

  search(cursor: string, viewId: string): string {
    const rest = ofView(cursor, viewId, 'l');
    try {
      decodeCursor(rest);
    } catch {
      throw invalid(cursor, 'malformed cursor');
    }
    return rest;
  },
};

function ofView(cursor: string, viewId: string, kind: 'm' | 'l'): string {
  const dot = cursor.indexOf('.');
  if (dot < 0 || !VIEW_ID.test(cursor.slice(0, dot))) throw invalid(cursor, 'malformed cursor: a view records cursor comes from a page of that view');
  if (cursor.slice(0, dot) !== viewId) throw invalid(cursor, `this cursor belongs to view '${cursor.slice(0, dot)}', not '${viewId}'`);
  if (cursor[dot + 1] !== kind) throw invalid(cursor, 'malformed cursor');
  return cursor.slice(dot + 2);
}
