// The where-filters: rows of field, operator and value.
import { OPS, type WhereRow } from '../searchRequest';

export function WhereRows({ rows, onChange }: { rows: WhereRow[]; onChange: (rows: WhereRow[]) => void }) {
  const set = (i: number, patch: Partial<WhereRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset class="where">
      <legend>Filters</legend>
      {rows.map((r, i) => (
        <div class="row" key={i}>
          <label>
            <span>Field</span>
            <input value={r.field} onInput={(e) => set(i, { field: e.currentTarget.value })} placeholder="level" />
          </label>
          <label>
            <span>Operator</span>
            <select value={r.op} onChange={(e) => set(i, { op: e.currentTarget.value as WhereRow['op'] })}>
              {OPS.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Value{r.op === 'in' || r.op === 'nin' ? 's (comma-separated)' : ''}</span>
            <input value={r.value} disabled={r.op === 'exists'} onInput={(e) => set(i, { value: e.currentTarget.value })} />
          </label>
          <button type="button" class="link" onClick={() => onChange(rows.filter((_, j) => j !== i))} aria-label={`Remove filter ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { field: '', op: 'eq', value: '' }])}>
        Add filter
      </button>
    </fieldset>
  );
}
