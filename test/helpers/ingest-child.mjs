// A process that ingests (or resumes ingesting) and reports each acknowledged count, to be killed mid-way.
import { createReadStream } from 'node:fs';
import { Engine } from '../../dist/engine/index.js';

const [dataDir, dataset, file] = process.argv.slice(2);
const engine = await Engine.open(dataDir, { lockWaitMs: 10_000 });
const caller = engine.localCaller();
let runId;
if (file) {
  const run = await engine.ingest.submit(caller, createReadStream(file), { dataset_id: dataset, format: 'text', filename: 'big.log' });
  runId = run.ingest_run_id;
  console.log(`RUN ${runId}`);
} else {
  runId = engine.ingest.list(caller, { dataset_id: dataset, limit: 1 })[0].ingest_run_id;
}
let last = -1;
const report = () => {
  // read back from LMDB: only what a committed transaction holds counts as acknowledged
  const run = engine.ingest.get(caller, runId);
  if (run.documents.expected !== last) console.log(`ACK ${(last = run.documents.expected)}`);
};
const timer = setInterval(report, 5);
await engine.ingest.wait(caller, runId);
clearInterval(timer);
report();
await engine.close();
console.log('DONE');
