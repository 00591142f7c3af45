// Search: the form, the time histogram, results with paging, a record's context, views and exports.
import { useEffect, useState } from 'preact/hooks';
import type { DatasetList } from '../../api/datasets';
import type { ResultRecord, SearchEnvelope, SearchRequest } from '../../api/search';
import { get, post } from '../api';
import { ContextPanel } from '../components/ContextPanel';
import { ErrorBox } from '../components/ErrorBox';
import { Histogram } from '../components/Histogram';
import { ResultRow } from '../components/ResultRow';
import { SearchActions } from '../components/SearchActions';
import { SearchFormView } from '../components/SearchForm';
import { fmtInt } from '../format';
import { bucketsOf, buildRequest, emptyForm, intervalFor, isoToLocal, spanOf, stepMs, type Bucket, type SearchForm } from '../searchRequest';
import { session } from '../session';
import { useAsync } from '../useAsync';

interface Answer {
  request: SearchRequest;
  envelope: SearchEnvelope;
  records: ResultRecord[];
  buckets: Bucket[];
  interval: string;
}

// the last search of this tab, so that coming back to the page shows it again (the page remounts on a tenant switch, which clears it)
let last: { tenant: string; form: SearchForm; answer: Answer | null } = { tenant: '', form: emptyForm(), answer: null };

export function SearchPage() {
  const datasets = useAsync(() => get<DatasetList>('/v1/datasets').then((d) => d.datasets.map((x) => x.dataset_id)));
  const tenant = session.value?.tenant ?? '';
  if (last.tenant !== tenant) last = { tenant, form: emptyForm(), answer: null };
  const [form, setForm] = useState<SearchForm>(last.form);
  const [answer, setAnswer] = useState<Answer | null>(last.answer);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<ResultRecord | null>(null);
  useEffect(() => void (last = { tenant, form, answer }), [form, answer]);

  const run = async (f: SearchForm) => {
    setBusy(true);
    setError(null);
    setOpen(null);
    try {
      const span = spanOf(f);
      let interval = span ? intervalFor(span) : '1d';
      const request = buildRequest(f, interval);
      const envelope = await post<SearchEnvelope>('/v1/search', request);
      let buckets = bucketsOf(envelope.aggregations);
      // "all": the day buckets say how long the data spans; draw it again at a finer interval
      if (!span && buckets.length) {
        const fine = intervalFor(buckets[buckets.length - 1].key - buckets[0].key + stepMs('1d'));
        if (fine !== '1d') {
          const again = await post<SearchEnvelope>('/v1/search', buildRequest(f, fine, 1));
          buckets = bucketsOf(again.aggregations);
          interval = fine;
        }
      }
      setAnswer({ request, envelope, records: envelope.records, buckets, interval });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const more = async () => {
    if (!answer?.envelope.next_cursor) return;
    setBusy(true);
    try {
      const page = await post<SearchEnvelope>('/v1/search', { cursor: answer.envelope.next_cursor, limit: answer.request.limit });
      setAnswer({ ...answer, envelope: { ...answer.envelope, next_cursor: page.next_cursor }, records: [...answer.records, ...page.records] });
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const narrow = (fromMs: number, toMs: number) => {
    const f: SearchForm = { ...form, preset: 'custom', from: isoToLocal(fromMs), to: isoToLocal(toMs) };
    setForm(f);
    void run(f);
  };

  return (
    <div class="search-page">
      <h1>Search</h1>
      <SearchFormView form={form} datasets={datasets.data ?? []} busy={busy} onChange={setForm} onSubmit={() => run(form)} />
      <ErrorBox error={error ?? datasets.error} />
      {answer && (
        <>
          <section aria-label="Time histogram" class="card">
            <Histogram buckets={answer.buckets} stepMs={stepMs(answer.interval)} onRange={narrow} />
          </section>
          <div class="summary" role="status">
            {fmtInt(answer.envelope.total.value)}
            {answer.envelope.total.relation === 'gte' ? '+' : ''} records · {answer.envelope.took_ms.toFixed(0)} ms · {answer.envelope.mode}
          </div>
          {answer.envelope.warnings?.map((w, i) => (
            <p key={i} class="warning">
              {w.message}
              {w.suggestions?.length ? ` (did you mean ${w.suggestions.join(', ')}?)` : ''}
            </p>
          ))}
          <SearchActions request={answer.request} />
          <div class={open ? 'results-split' : undefined}>
            <ol class="results" aria-label="Results">
              {answer.records.map((r) => (
                <ResultRow key={r.id} record={r} selected={open?.id === r.id} onOpen={() => setOpen(r)} />
              ))}
            </ol>
            {open && <ContextPanel record={open} onClose={() => setOpen(null)} />}
          </div>
          {!answer.records.length && <p class="muted">No records match.</p>}
          {answer.envelope.next_cursor && (
            <button type="button" onClick={more} disabled={busy}>
              More results
            </button>
          )}
        </>
      )}
    </div>
  );
}
