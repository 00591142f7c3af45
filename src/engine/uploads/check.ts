import type { UploadComplete } from '../../api/uploads.js';
import { Invalid, type Loc } from '../errors.js';
import type { PartState } from './state.js';

/** An etag as a client may send it back: quoted as in the ETag header, or not. */
const bare = (etag: string) => etag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1').toLowerCase();

/**
 * The stored parts that make the object, in order, when the list names parts 1..N in that order,
 * each uploaded and with the etag its PUT returned; else 422 locating every offending item.
 * Parts uploaded but not listed are left out of the object, as in S3.
 */
export function checkParts(listed: UploadComplete['parts'], stored: Map<number, PartState>): PartState[] {
  const issues: { loc: Loc; msg: string; type: string; input?: unknown }[] = [];
  const parts = listed.map(({ part_number: n, etag }, i) => {
    const at: Loc = ['body', 'parts', i];
    const part = stored.get(n);
    if (n !== i + 1) issues.push({ loc: [...at, 'part_number'], msg: `parts must be listed in order from 1 without gaps: expected part ${i + 1}`, type: 'part_order', input: n });
    else if (!part) issues.push({ loc: [...at, 'part_number'], msg: `part ${n} was not uploaded`, type: 'missing_part', input: n });
    else if (bare(etag) !== part.etag) issues.push({ loc: [...at, 'etag'], msg: `etag of part ${n} does not match the uploaded part`, type: 'etag_mismatch', input: etag });
    return part!;
  });
  if (issues.length > 0) throw new Invalid(issues.slice(0, 3).map((i) => i.msg).join('; ') + (issues.length > 3 ? ` (${issues.length} problems)` : ''), issues);
  return parts;
}
