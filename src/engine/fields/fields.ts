import type { Field, FieldQuery } from '../../api/fields.js';
import type { Caller } from '../auth/caller.js';
import type { Datasets } from '../datasets/datasets.js';
import type { Sources } from '../sources/sources.js';
import { scanPrefix, type Store } from '../store/db.js';
import { physicalField, type ValueType } from './discover.js';
import { keys } from '../store/keys.js';

/** Fields discovered in a tenant's records, as the writer counted them per path and value type. */
export class Fields {
  constructor(
    private readonly store: Store,
    private readonly datasets: Datasets,
    private readonly sources: Sources,
    /** whether the SQL index holds a field's values of a type (a column for it) */
    private readonly fastOf: (tenantId: string, datasetId: string) => (path: string, type: string) => boolean = () => () => false,
  ) {}

  list(caller: Caller, query: FieldQuery): Field[] {
    const t = caller.tenant_id;
    const datasetIds = query.dataset_id ? [this.datasets.state(t, query.dataset_id).dataset_id] : this.datasets.ids(t);
    return datasetIds.flatMap((d) => this.ofDataset(t, d, query.prefix));
  }

  private ofDataset(t: string, d: string, prefix?: string): Field[] {
    const fast = this.fastOf(t, d);
    const textFields = new Set(this.sources.ofDataset(t, d).flatMap((s) => s.search_config.text_fields.map((f) => f.field)));
    const byPath = new Map<string, { type: ValueType; count: number; sample: unknown }[]>();
    for (const { key, value } of scanPrefix<{ count: number; sample: unknown }>(this.store.meta, keys.field(t, d))) {
      const path = String(key[3]);
      if (prefix && !path.startsWith(prefix)) continue;
      const variants = byPath.get(path) ?? [];
      variants.push({ type: key[4] as ValueType, ...value });
      byPath.set(path, variants);
    }
    return [...byPath].map(([path, variants]) => {
      variants.sort((a, b) => b.count - a.count);
      const flags = { indexed: textFields.has(path), stored: true, fast: variants.some((v) => fast(path, v.type)) };
      return {
        dataset_id: d,
        tenant_id: t,
        field_path: path,
        type: variants[0].type,
        ...flags,
        seen_count: variants.reduce((n, v) => n + v.count, 0),
        // every field has at least one variant: where its values of each type are kept (its SQL column)
        variants: variants.map((v) => ({
                dataset_id: d,
                tenant_id: t,
                field_path: path,
                physical_field: physicalField(path, v.type, variants.length),
                value_type: v.type,
                sample_value: typeof v.sample === 'string' ? v.sample.slice(0, 200) : JSON.stringify(v.sample ?? null).slice(0, 200),
                ...flags,
                fast: fast(path, v.type),
                seen_count: v.count,
            })),
      };
    });
  }
}
