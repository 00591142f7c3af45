// One search result: title, time, score, highlighted snippets, metadata and provenance.
import type { ResultRecord } from '../../api/search';
import { fmtTime, fmtValue } from '../format';
import { Highlight } from './Highlight';

const fileOf = (key: string) => key.slice(key.lastIndexOf('/') + 1);

export function ResultRow({ record, selected, onOpen }: { record: ResultRecord; selected: boolean; onOpen: () => void }) {
  const p = record.provenance;
  const meta = Object.entries(record.metadata);
  return (
    <li class={`result${selected ? ' selected' : ''}`} data-testid="result" onClick={onOpen}>
      <div class="result-head">
        <button type="button" class="link result-title" onClick={(e) => (e.stopPropagation(), onOpen())} aria-expanded={selected}>
          {record.title || `${fileOf(p.source_key)}:${p.line}`}
        </button>
        <span class="muted">{fmtTime(record.time ?? record.created_at)}</span>
        {record.score_kind !== 'none' && <span class="score" title={record.score_kind}>score {record.score.toFixed(3)}</span>}
      </div>
      <div class="snippets">
        {record.snippets.length ? (
          record.snippets.map((s, i) => <Highlight key={i} html={s} testid="result-snippet" />)
        ) : (
          <span class="snippet" data-testid="result-snippet">{record.body.slice(0, 300)}</span>
        )}
      </div>
      {meta.length > 0 && (
        <dl class="meta">
          {meta.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{fmtValue(v)}</dd>
            </div>
          ))}
        </dl>
      )}
      <div class="provenance muted" title={`${p.dataset_id} · ${p.source_bucket}/${p.source_key} · etag ${p.source_etag}`}>
        {p.dataset_id} · {p.source_key}:{p.line}
      </div>
    </li>
  );
}
