// The time range: presets, or from/to (UTC).
import { PRESETS, type Preset } from '../searchRequest';

interface Props {
  preset: Preset;
  from: string;
  to: string;
  onChange: (v: { preset: Preset; from: string; to: string }) => void;
}

export function TimeRange({ preset, from, to, onChange }: Props) {
  return (
    <fieldset class="time-range">
      <legend>Time (UTC)</legend>
      <div class="presets" role="group" aria-label="Time presets">
        {PRESETS.map((p) => (
          <button key={p} type="button" aria-pressed={preset === p} onClick={() => onChange({ preset: p, from: '', to: '' })}>
            {p === 'all' ? 'All' : `Last ${p}`}
          </button>
        ))}
      </div>
      <div class="row">
        <label>
          <span>From</span>
          <input type="datetime-local" step="1" value={from} onInput={(e) => onChange({ preset: 'custom', from: e.currentTarget.value, to })} />
        </label>
        <label>
          <span>To</span>
          <input type="datetime-local" step="1" value={to} onInput={(e) => onChange({ preset: 'custom', from, to: e.currentTarget.value })} />
        </label>
      </div>
    </fieldset>
  );
}
