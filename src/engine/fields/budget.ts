import { LIMITS } from '../../api/limits.js';
import { MAX_KEY, type Store } from '../store/db.js';
import { keys } from '../store/keys.js';

export const FIELD_LIMIT = LIMITS.datasetFields;
export const TOO_MANY_FIELDS = `would add fields beyond the dataset's limit of ${FIELD_LIMIT}`;

/**
 * The distinct field paths a dataset has discovered (a path seen with several types counts once;
 * title, body and time count as the fields they are), and the admission of records against the
 * limit: a record whose new paths would take the dataset past it is refused whole, so that the
 * fields a dataset shows never depend on which part of a record came first.
 */
export class FieldBudget {
  private constructor(
    private readonly known: Set<string>,
    private readonly limit: number,
  ) {}

  /** The dataset's paths as the store holds them, read inside the transaction that will add more. */
  static of(store: Store, tenantId: string, datasetId: string, limit: number = FIELD_LIMIT): FieldBudget {
    const prefix = keys.field(tenantId, datasetId);
    const known = new Set<string>();
    for (const key of store.meta.getKeys({ start: prefix, end: [...prefix, MAX_KEY] })) known.add(String((key as unknown[])[3]));
    return new FieldBudget(known, limit);
  }

  /** True when the record's paths keep the dataset within the limit; its new paths then count. */
  admit(paths: readonly string[]): boolean {
    let unknown = false;
    for (const path of paths) {
      if (!this.known.has(path)) {
        unknown = true;
        break;
      }
    }
    if (!unknown) return true;
    const fresh = new Set(paths.filter((p) => !this.known.has(p)));
    if (this.known.size + fresh.size > this.limit) return false;
    for (const path of fresh) this.known.add(path);
    return true;
  }
}
