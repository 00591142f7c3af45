import { InvalidArgumentError, type Command } from 'commander';
import type { ReindexJob } from '../../api/reindex.js';
import { EXIT, Exit, withService } from '../context.js';
import { statusLine } from '../progress.js';
import type { Service } from '../service.js';
import { sourceOf } from './sources.js';

type IndexName = ReindexJob['indexes'][number];
const INDEXES: IndexName[] = ['text', 'vector', 'sql'];

/** --index, repeatable: each name checked as it is given, each kept once. */
function collectIndex(v: string, prev: IndexName[] = []): IndexName[] {
  if (!INDEXES.includes(v as IndexName)) throw new InvalidArgumentError('use text, vector or sql');
  return prev.includes(v as IndexName) ? prev : [...prev, v as IndexName];
}

const count = (n: number) => n.toLocaleString('en-US');

/** How far a job got, for the status line. */
function progressText(j: ReindexJob): string {
  const objects = j.phase === 'reparse' ? `, ${count(j.object_count - (j.object_status_counts.pending ?? 0))}/${count(j.object_count)} objects` : '';
  const records = ['rebuild', 'replay', 'promote', 'done'].includes(j.phase) && j.source_document_count > 0 ? `, ${count(j.source_document_count)} records` : '';
  return `reindex ${j.job_id}: ${j.status}, ${j.phase}${objects}${records}`;
}

/** Waits for the job, its progress on a terminal's stderr meanwhile. */
async function waitFor(service: Service, job: ReindexJob): Promise<ReindexJob> {
  const line = statusLine();
  try {
    return await service.waitReindex(job.job_id, (j) => line.update(progressText(j)));
  } finally {
    line.stop();
  }
}

export function reindexCommand(program: Command): void {
  program
    .command('reindex <dataset_id>')
    .description("rebuild a dataset's indexes from its records as a new generation, then switch to it (a reindex job; searches keep answering meanwhile)")
    .option('--index <name>', 'only this index: text, vector or sql (repeatable; default: every index the dataset has)', collectIndex)
    .option('--source <source>', "parse again only the objects of this source (id or key) whose config changed; every index chosen is still rebuilt whole")
    .option('--wait', 'wait until the job ends; exit 5 if it failed or was cancelled')
    .addHelpText(
      'after',
      `\nObjects whose source config (format, transform_config) changed since they were ingested are
parsed again first, so that a changed transform reaches the records already stored. Stop a job
with \`svc jobs cancel JOB_ID\` until it switches to the new generation: the one serving now keeps
serving. A local command runs the job before it exits, with or without --wait.

Examples:
  svc reindex logs --wait
  svc reindex logs --index text --index sql
  svc reindex logs --source 3 --output json`,
    )
    .action((datasetId: string, o: { index?: IndexName[]; source?: string; wait?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => {
        const source = o.source === undefined ? undefined : (await sourceOf(service, o.source)).source_id;
        let job = await service.reindex({ dataset_id: datasetId, source_id: source, indexes: o.index });
        // a local command runs the job before it exits anyway: it says how it ended
        if (o.wait || service.mode === 'local') job = await waitFor(service, job);
        await emit(job);
        if (o.wait && (job.status === 'failed' || job.status === 'cancelled')) {
          throw new Exit(EXIT.runFailed, `reindex job ${job.job_id} ${job.status === 'failed' ? `failed: ${job.error_message}` : 'was cancelled'}`);
        }
      }),
    );
}
