// The search form: datasets, text, query string, filters, time range and mode.
import type { Mode, SearchForm } from '../searchRequest';
import { TimeRange } from './TimeRange';
import { WhereRows } from './WhereRows';

interface Props {
  form: SearchForm;
  datasets: string[];
  busy: boolean;
  onChange: (f: SearchForm) => void;
  onSubmit: () => void;
}

export function SearchFormView({ form, datasets, busy, onChange, onSubmit }: Props) {
  const set = (patch: Partial<SearchForm>) => onChange({ ...form, ...patch });
  return (
    <form
      class="card search-form"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      <div class="row">
        <label class="grow">
          <span>Text</span>
          <input type="search" data-testid="search-text" value={form.text} onInput={(e) => set({ text: e.currentTarget.value })} placeholder="words to find" />
        </label>
        <label>
          <span>Dataset</span>
          <select
            data-testid="search-dataset"
            value={form.datasets.length === 1 ? form.datasets[0] : ''}
            onChange={(e) => set({ datasets: e.currentTarget.value ? [e.currentTarget.value] : [] })}
          >
            <option value="">All datasets</option>
            {datasets.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Mode</span>
          <select value={form.mode} onChange={(e) => set({ mode: e.currentTarget.value as Mode })}>
            <option value="text">text</option>
            <option value="semantic">semantic</option>
            <option value="hybrid">hybrid</option>
          </select>
        </label>
      </div>
      <label>
        <span>Query string (q)</span>
        <input data-testid="search-q" value={form.q} onInput={(e) => set({ q: e.currentTarget.value })} placeholder='level:ERROR AND "exact phrase"' />
      </label>
      <div class="row wrap">
        <TimeRange preset={form.preset} from={form.from} to={form.to} onChange={(t) => set(t)} />
        <WhereRows rows={form.where} onChange={(where) => set({ where })} />
      </div>
      <div class="row">
        <button type="submit" class="primary" data-testid="search-submit" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </div>
    </form>
  );
}
