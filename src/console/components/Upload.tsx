// Upload a file into a dataset (through its hosted source, whose key is the dataset id), with progress.
import { useState } from 'preact/hooks';
import { uploadFile } from '../upload';
import { ErrorBox } from './ErrorBox';

export function Upload({ datasets, onDone }: { datasets: string[]; onDone: () => void }) {
  const [dataset, setDataset] = useState('');
  const [format, setFormat] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [msg, setMsg] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const target = dataset || datasets[0] || '';

  const send = async (e: Event) => {
    e.preventDefault();
    if (!file || !target) return;
    setError(null);
    setMsg(null);
    setProgress(0);
    try {
      const done = await uploadFile(target, file, format || undefined, setProgress);
      setMsg(`Uploaded ${file.name}: ingest run ${done.ingest_run_id} started.`);
      onDone();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setProgress(null);
    }
  };

  return (
    <section class="card" aria-labelledby="upload-h">
      <h2 id="upload-h">Upload a file</h2>
      <form class="row wrap" onSubmit={send}>
        <label>
          <span>Dataset</span>
          <select value={target} onChange={(e) => setDataset(e.currentTarget.value)}>
            {datasets.map((d) => (
              <option key={d}>{d}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Format</span>
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value)}>
            <option value="">from the file name</option>
            <option value="text">text</option>
            <option value="ndjson">ndjson</option>
            <option value="json">json</option>
            <option value="csv">csv</option>
          </select>
        </label>
        <label class="grow">
          <span>File</span>
          <input type="file" data-testid="upload-file" onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)} />
        </label>
        <button type="submit" class="primary" disabled={!file || !target || progress !== null}>
          Upload
        </button>
      </form>
      {progress !== null && (
        <label class="progress">
          <span>Sending {Math.round(progress * 100)}%</span>
          <progress max={1} value={progress} />
        </label>
      )}
      {msg && <p role="status">{msg}</p>}
      <ErrorBox error={error} />
    </section>
  );
}
