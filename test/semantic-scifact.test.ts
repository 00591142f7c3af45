/** The builtin embedder end to end: SciFact through semantic and hybrid search, and the CLI's semantic flags. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS, ingestScifact } from '../bench/lib/scifact.js';
import type { ResultRecord } from '../src/api/search.js';
import { Engine } from '../src/engine/index.js';
import { init, svc, tempDir } from './helpers/cli.js';

describe('SciFact with the builtin embedder', () => {
  let dir: ReturnType<typeof tempDir>;
  let engine: Engine;
  const lines = readFileSync(CORPUS, 'utf8').split('\n');

  beforeAll(async () => {
    dir = tempDir('svc-semantic-scifact-');
    engine = await Engine.open(dir.path, { background: true }); // embeds as `svc serve` does
    await engine.init('bench', 'admin@localhost');
    const caller = engine.localCaller();
    const ready = await ingestScifact(engine);
    expect(ready.status).toBe('ready');
    await engine.jobs.drain();
    const embedded = engine.ingest.get(caller, ready.ingest_run_id);
    expect(embedded.documents).toMatchObject({ semantic_embedded: 5183, semantic_failed: 0, semantic_total: 5183 });
    expect(embedded.lifecycle.state).toBe('ready');
    expect(embedded.ready_for).toEqual({ text_search: true, sql_search: expect.any(Boolean), semantic_search: true });
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    dir?.remove();
  });

  /** Provenance that leads back to the exact line of the ingested file. */
  function expectProvenance(r: ResultRecord): void {
    const p = r.provenance;
    expect(p).toMatchObject({ dataset_id: 'scifact', tenant_id: engine.localCaller().tenant_id, source_bucket: 'hosted', transform_version: 2 });
    expect(p.source_key).toMatch(/^scifact\/obj_[0-9a-z]+\/corpus\.jsonl$/);
    expect(p.source_etag).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.parse(lines[p.line - 1])._id).toBe(r.id);
  }

  it('finds by meaning, with full provenance and cosine scores', async () => {
    const r = await engine.search.run(engine.localCaller(), { text: 'cerebral white matter diffusion tensor imaging in newborns', datasets: ['scifact'], mode: 'semantic', limit: 10 });
    expect(r.mode).toBe('semantic');
    expect(r.records).toHaveLength(10);
    expect(r.records[0].id).toBe('4983');
    for (const rec of r.records) {
      expect(rec.score_kind).toBe('cosine');
      expect(rec.score).toBeGreaterThan(0);
      expect(rec.score).toBeLessThanOrEqual(1.0001);
      expectProvenance(rec);
    }
    expect(r.records.map((x) => x.score)).toEqual([...r.records.map((x) => x.score)].sort((a, b) => b - a));
  });

  it('fuses text and vectors in hybrid mode, pages through the frozen ranking, and keeps provenance', async () => {
    const caller = engine.localCaller();
    const first = await engine.search.run(caller, { text: 'vitamin D deficiency and bone fractures in the elderly', datasets: ['scifact'], semantic: true, limit: 5 });
    expect(first.mode).toBe('hybrid');
    expect(first.records).toHaveLength(5);
    for (const rec of first.records) {
      expect(rec.score_kind).toBe('adaptive_zscore_fusion');
      expectProvenance(rec);
    }
    const next = await engine.search.run(caller, { cursor: first.next_cursor });
    expect(next.records).toHaveLength(5);
    expect(next.mode).toBe('hybrid');
    expect(next.records.map((r) => r.id)).not.toContain(first.records[0].id);
    for (const rec of next.records) expectProvenance(rec);
  });
});

describe('command line', () => {
  const dir = tempDir('svc-semantic-cli-');
  afterAll(() => dir.remove());
  const run = (args: string[]) => svc([...args, '--output', 'json'], { dataDir: dir.path });

  it('creates datasets with chosen semantic fields or none, searches by meaning, and backfills filters', () => {
    init(dir.path);
    const notes = run(['datasets', 'create', 'notes', '--semantic-field', 'body']);
    expect(notes.status, notes.stderr).toBe(0);
    expect(run(['datasets', 'create', 'plain', '--no-semantic']).status).toBe(0);
    const file = join(dir.path, 'notes.ndjson');
    writeFileSync(file, [
      { id: 'n1', title: 'ignored by the vectors', body: 'the patient had a heart attack', level: 'high' },
      { id: 'n2', title: 'x', body: 'quarterly earnings beat the forecast', level: 'low' },
      { id: 'n3', title: 'x', body: 'myocardial infarction in elderly people', level: 'high' },
    ].map((r) => JSON.stringify(r)).join('\n'));
    for (const d of ['notes', 'plain']) expect(run(['ingest', d, file, '--wait', '--id-field', 'id']).status).toBe(0);

    const sources = run(['sources', 'list', '--dataset', 'notes']).json();
    expect(sources.sources[0].semantic_config.document_embeddings.fields).toEqual([{ field: 'body', max_chars: 4000 }]);
    expect(run(['sources', 'list', '--dataset', 'plain']).json().sources[0].semantic_config).toEqual({});

    const semantic = run(['search', 'cardiac arrest', '--dataset', 'notes', '--mode', 'semantic', '--limit', '2']);
    expect(semantic.status, semantic.stderr).toBe(0);
    expect(semantic.json().records.map((r: ResultRecord) => r.id).sort()).toEqual(['n1', 'n3']);
    const hybrid = run(['search', 'heart', '--dataset', 'notes', '--semantic', '--min-score', '0.2']);
    expect(hybrid.json().mode).toBe('hybrid');
    expect(hybrid.json().records[0].id).toBe('n1');

    const none = run(['search', 'heart', '--dataset', 'plain', '--semantic']);
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/no dataset searched \('plain'\) has any/);
    const empty = run(['search', '--dataset', 'notes', '--mode', 'semantic']);
    expect(empty.status).not.toBe(0);
    expect(empty.stderr).toMatch(/non-empty text/);

    const backfill = run(['jobs', 'backfill', 'notes', '--wait']);
    expect(backfill.status, backfill.stderr).toBe(0);
    expect(backfill.json()).toMatchObject({ status: 'succeeded', dataset_id: 'notes', sources_processed: 1, objects_processed: 1, records_restamped: 3 });
    const listed = run(['jobs', 'list', '--type', 'semantic_filter_backfill']).json();
    expect(listed.jobs).toHaveLength(1);
  });
});
