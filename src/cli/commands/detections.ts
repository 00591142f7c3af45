import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { Severity, type Detection, type DetectionCreate, type HitList, type Threshold, type WebhookAction } from '../../api/detections.js';
import type { SearchRequest } from '../../api/search.js';
import { confirmDestructive, EXIT, Exit, withService } from '../context.js';
import { printAll, sayMore, type PageShape, type Paged } from '../paging.js';
import { stdoutClosed } from '../stdout.js';

const COLUMNS = ['detection_id', 'name', 'severity', 'enabled', 'datasets', 'trigger.on_ingest', 'trigger.cron', 'last_run_at', 'updated_at'];
const HIT_COLUMNS = ['hit_id', 'triggered_at', 'severity', 'group_value', 'count', 'window_start', 'window_end'];
/** the most hits the API gives a page */
const HITS_PAGE_MAX = 500;
const SEVERITIES = Severity.anyOf.map((s) => s.const);

type RuleFlags = {
  fromFile?: string;
  name?: string;
  description?: string;
  severity?: Severity;
  dataset?: string[];
  q?: string;
  text?: string;
  sql?: string;
  onIngest?: boolean;
  cron?: string | false;
  timezone?: string;
  threshold?: number | false;
  window?: string;
  groupBy?: string;
  groupPattern?: string;
  webhook?: string[] | false;
  webhookSecret?: string | false;
  disabled?: boolean;
  enabled?: boolean;
};

/** A definition being put together: any member may still be missing. */
type Draft = Partial<Omit<DetectionCreate, 'actions'>> & { actions?: WebhookAction[] };

const collect = (v: string, all: unknown) => [...(Array.isArray(all) ? all : []), v];
const positiveInt = (v: string) => {
  if (!/^[1-9][0-9]*$/.test(v)) throw new InvalidArgumentError('a whole number of at least 1');
  return Number(v);
};

/** The JSON of --from-file (`-` reads stdin): an object of DetectionCreate members. */
function readRule(file: string): Draft {
  let rule: unknown;
  try {
    rule = JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8'));
  } catch (err) {
    throw new Exit(EXIT.usage, `--from-file ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!rule || typeof rule !== 'object' || Array.isArray(rule)) throw new Exit(EXIT.usage, `--from-file ${file}: not a JSON object`);
  return rule as Draft;
}

/** The flags over a definition (the file's, or the one there is): each flag replaces what it names, and only that. */
function applyFlags(base: Draft, o: RuleFlags): Draft {
  const def: Draft = { ...base };
  if (o.name !== undefined) def.name = o.name;
  if (o.description !== undefined) def.description = o.description;
  if (o.severity !== undefined) def.severity = o.severity;
  if (o.dataset?.length) def.datasets = o.dataset;
  if (o.enabled && o.disabled) throw new Exit(EXIT.usage, '--enabled or --disabled, not both');
  if (o.enabled || o.disabled) def.enabled = Boolean(o.enabled);

  if (o.sql !== undefined && (o.q !== undefined || o.text !== undefined)) throw new Exit(EXIT.usage, 'a detection is a search (--q, --text) or a SQL statement (--sql), not both');
  if (o.sql !== undefined) def.query = { sql: o.sql };
  else if (o.q !== undefined || o.text !== undefined) {
    const sr: SearchRequest = { ...(def.query?.search_request ?? {}) };
    if (o.q !== undefined) sr.q = o.q;
    if (o.text !== undefined) sr.text = o.text;
    def.query = { search_request: sr };
  }

  if (o.onIngest !== undefined || o.cron !== undefined || o.timezone !== undefined) {
    const trigger = { on_ingest: false, ...def.trigger };
    if (o.onIngest !== undefined) trigger.on_ingest = o.onIngest;
    if (o.cron === false) Object.assign(trigger, { cron: null, timezone: null });
    else if (o.cron !== undefined) trigger.cron = o.cron;
    if (o.timezone !== undefined) trigger.timezone = o.timezone;
    def.trigger = trigger;
  }

  if (o.threshold === false) {
    if (o.window !== undefined || o.groupBy !== undefined || o.groupPattern !== undefined) throw new Exit(EXIT.usage, '--no-threshold takes no --window, --group-by or --group-pattern');
    def.threshold = null;
  } else if (o.threshold !== undefined || o.window !== undefined || o.groupBy !== undefined || o.groupPattern !== undefined) {
    const th: Partial<Threshold> = { ...def.threshold };
    if (o.threshold !== undefined) th.count_gte = o.threshold;
    if (o.window !== undefined) th.window = o.window;
    // a group is made one way: the flag given replaces the other way
    if (o.groupBy !== undefined) th.group_by = o.groupBy;
    if (o.groupPattern !== undefined) th.group_pattern = o.groupPattern;
    if (o.groupBy !== undefined && o.groupPattern === undefined) delete th.group_pattern;
    if (o.groupPattern !== undefined && o.groupBy === undefined) delete th.group_by;
    if (th.count_gte === undefined) throw new Exit(EXIT.usage, '--window, --group-by and --group-pattern belong to a threshold: give --threshold N');
    if (th.window === undefined) throw new Exit(EXIT.usage, '--threshold needs --window: how far back matches count (30s, 10m, 1h, 1d)');
    def.threshold = th as Threshold;
  }

  if (o.webhook === false) def.actions = [];
  else if (o.webhook?.length) def.actions = o.webhook.map((url) => ({ type: 'webhook' as const, url }));
  if (o.webhookSecret !== undefined) {
    if (!def.actions?.length) throw new Exit(EXIT.usage, '--webhook-secret signs webhooks: give --webhook URL too');
    const secret = o.webhookSecret === false ? null : o.webhookSecret;
    def.actions = def.actions.map(({ type, url }) => ({ type, url, secret }));
  }
  return def;
}

/** A new detection: the file's definition with the flags over it, complete (checked before anything opens). */
function createRequest(o: RuleFlags): DetectionCreate {
  const def = applyFlags(o.fromFile ? readRule(o.fromFile) : {}, o);
  const needs: [keyof Draft, string][] = [['name', '--name'], ['severity', '--severity'], ['datasets', '--dataset'], ['query', '--q, --text or --sql'], ['trigger', '--on-ingest or --cron']];
  const missing = needs.filter(([k]) => def[k] === undefined).map(([, flag]) => flag);
  if (missing.length) throw new Exit(EXIT.usage, `incomplete detection: give ${missing.join('; ')} (or --from-file RULE.json)`);
  return def as DetectionCreate;
}

/**
 * What a detection is, as a definition to send again: the view without what the server keeps
 * (ids, times) and its actions without secrets, which the server never shows.
 */
function definitionOf(det: Detection): Draft {
  const { detection_id: _id, created_at: _c, updated_at: _u, next_run_at: _n, last_run_at: _l, actions, query, ...rest } = det;
  // the server sets a search's datasets from the detection's own: leave them to it, so --dataset holds
  const sr = query.search_request && { ...query.search_request, datasets: undefined };
  return { ...rest, query: sr ? { search_request: JSON.parse(JSON.stringify(sr)) } : query, actions: actions.map(({ type, url }) => ({ type, url })) };
}

/** The detection as the flags and file change it. Signed webhooks carried over unchanged need their secret again. */
function updateRequest(current: Detection, o: RuleFlags): DetectionCreate {
  const carried = definitionOf(current);
  const def = applyFlags(o.fromFile ? { ...carried, ...readRule(o.fromFile) } : carried, o);
  if (def.actions === carried.actions && current.actions.some((a) => a.secret_set)) {
    throw new Exit(EXIT.usage, `detection '${current.detection_id}' signs its webhooks and a secret is never shown: give --webhook-secret S again (or --no-webhook-secret to stop signing)`);
  }
  return def as DetectionCreate;
}

/** The flags `create` and `update` share. */
function addRuleFlags(cmd: Command): Command {
  return cmd
    .option('--from-file <file>', 'the definition as JSON (`-` reads stdin): {name, description?, severity, enabled?, datasets, query: {search_request | sql}, trigger: {on_ingest, cron?, timezone?}, threshold?, actions?}; flags override its members')
    .option('--name <name>', 'what the detection is called')
    .option('--description <text>', 'what it looks for')
    .addOption(new Option('--severity <level>', 'how serious a hit is').choices(SEVERITIES))
    .option('--dataset <dataset>', 'a dataset to watch (repeat for more)', collect)
    .option('--q <query>', 'the query to match each record against (field:value, "a phrase", AND/OR/NOT)')
    .option('--text <text>', 'words to match each record against')
    .option('--sql <statement>', 'instead of a search: one read-only statement, run on --cron; $since and $until bind the run\'s span; each row is a match')
    .option('--on-ingest', 'test every record as it is ingested (searches only)')
    .option('--no-on-ingest', 'stop testing records as they are ingested')
    .option('--cron <expr>', 'run on this schedule: five fields (or six, with seconds first)')
    .option('--no-cron', 'drop the schedule')
    .option('--timezone <tz>', 'the IANA time zone of --cron (default UTC)')
    .option('--threshold <n>', 'fire once N records match within --window (default: every match fires)', positiveInt)
    .option('--no-threshold', 'drop the threshold: every match fires')
    .option('--window <duration>', 'how far back a threshold counts matches: 30s, 10m, 1h, 1d')
    .option('--group-by <field>', 'count the threshold per value of this field')
    .option('--group-pattern <regex>', 'or: per capture of this regular expression (one group) over the body')
    .option('--webhook <url>', 'POST each hit to this URL (repeat for more); replaces the webhooks there were', collect)
    .option('--no-webhook', 'drop every webhook')
    .option('--webhook-secret <secret>', 'sign each delivery to the webhooks with HMAC-SHA256 of this secret (header x-svc-signature)')
    .option('--no-webhook-secret', 'deliver unsigned')
    .option('--disabled', 'keep the detection but run it nowhere')
    .option('--enabled', 'run it again');
}

/** A test's hits, or a page of hits, as rows: a hit's records are in the JSON, not in a row. */
const hitRows = (hits: object[]) => hits as Record<string, unknown>[];

export function detectionsCommand(program: Command): void {
  const detections = program.command('detections').alias('detection').description('detections: rules that test records on ingest or on a schedule, and the hits they fire');
  addRuleFlags(detections.command('create').description('create a detection (admin); prints it'))
    .addHelpText(
      'after',
      `
Flags alone make a whole rule, or complete and override the one --from-file gives.

Examples:
  svc detections create --name ssh-brute-force --severity high --dataset logs \\
    --q '"Failed password"' --on-ingest --threshold 5 --window 10m --group-pattern 'from (\\S+)'
  svc detections create --from-file rule.json --webhook https://hooks.example.com/svc --webhook-secret "$SECRET"
  svc detections create --name nightly-errors --severity medium --dataset logs \\
    --sql 'SELECT host, count(*) AS n FROM logs WHERE ts >= $since AND ts < $until GROUP BY host HAVING n > 100' \\
    --cron '0 3 * * *' --timezone Europe/Paris`,
    )
    .action((o: RuleFlags, cmd: Command) => {
      const req = createRequest(o);
      return withService(cmd, async ({ service, emit }) => emit(await service.createDetection(req)));
    });
  addRuleFlags(detections.command('update <detection_id>').description('change a detection (admin): the flags and file over its definition; prints it'))
    .addHelpText(
      'after',
      `
Only what a flag names changes (--from-file replaces the members it has). The detection starts
afresh: threshold counts and on-ingest position restart from now; its hits stay.

A webhook secret is write-only: svc never shows it, so it cannot send it back unchanged. An update of
a detection whose webhooks are signed needs --webhook-secret S again (or --no-webhook-secret),
unless it gives the webhooks anew.

Examples:
  svc detections update det_01jd… --threshold 10 --window 5m
  svc detections update det_01jd… --disabled --webhook-secret "$SECRET"
  svc detections update det_01jd… --no-webhook`,
    )
    .action((id: string, o: RuleFlags, cmd: Command) =>
      withService(cmd, async ({ service, emit }) => emit(await service.updateDetection(id, updateRequest(await service.getDetection(id), o)))),
    );
  detections
    .command('list')
    .description('detections of the tenant, newest first')
    .option('--limit <n>', 'at most this many (max 500)', positiveInt)
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .addHelpText('after', '\nExample:\n  svc detections list --output json')
    .action((o: { limit?: number; cursor?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const list = await service.listDetections(o);
        await emit(list, { rows: list.detections, columns: COLUMNS });
        sayMore(format, 'detections', list.next_cursor);
      }),
    );
  detections
    .command('get <detection_id>')
    .description('show a detection (webhook secrets show only as secret_set)')
    .addHelpText('after', '\nExample:\n  svc detections get det_01jd… --output json')
    .action((id: string, _o, cmd: Command) => withService(cmd, async ({ service, emit }) => emit(await service.getDetection(id))));
  detections
    .command('delete <detection_id>')
    .description('delete a detection and its hits (admin)')
    .addHelpText('after', '\nExample:\n  svc detections delete det_01jd… --yes')
    .action((id: string, _o, cmd: Command) =>
      withService(cmd, async ({ service, emit, globals }) => {
        await confirmDestructive(globals, `Delete detection '${id}' and its hits?`);
        await emit(await service.deleteDetection(id));
      }),
    );
  detections
    .command('test <detection_id>')
    .description('dry run (admin): what the detection would fire over the records already there; nothing stored, no webhook called')
    .option('--since <time>', 'only records from this ISO 8601 time on')
    .addHelpText('after', '\nExamples:\n  svc detections test det_01jd…\n  svc detections test det_01jd… --since 2024-05-01T00:00:00Z --output ndjson')
    .action((id: string, o: { since?: string }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        const result = await service.testDetection(id, { since: o.since });
        await emit(result, { rows: hitRows(result.hits), columns: HIT_COLUMNS.slice(1) });
        if (stdoutClosed()) return;
        if (format === 'table') process.stdout.write(`${result.hits.length} hits; ${result.records_matched} of ${result.records_evaluated} records matched\n`);
        if (!result.complete) process.stderr.write(`svc: warning: the dry run stopped at its bound: it read the oldest records only (give --since to test the newest)\n`);
      }),
    );
  detections
    .command('hits <detection_id>')
    .description("a detection's hits, newest first (ndjson prints one hit a line, its records with it)")
    .option('--since <time>', 'only hits triggered from this ISO 8601 time on')
    .option('--limit <n>', `hits per page (max ${HITS_PAGE_MAX})`, positiveInt)
    .option('--cursor <cursor>', 'next page: the next_cursor of the previous answer')
    .option('--all', 'every hit, page after page (from --cursor when given; --limit is the page size): ndjson and csv stream, json is one array')
    .addHelpText('after', '\nExamples:\n  svc detections hits det_01jd… --limit 10\n  svc detections hits det_01jd… --since 2024-05-01T00:00:00Z --all --output ndjson | jq .group_value')
    .action((id: string, o: { since?: string; limit?: number; cursor?: string; all?: boolean }, cmd: Command) =>
      withService(cmd, async ({ service, emit, format }) => {
        if (!o.all) {
          const page = await service.detectionHits(id, { since: o.since, limit: o.limit, cursor: o.cursor });
          await emit(page, { rows: hitRows(page.hits), columns: HIT_COLUMNS });
          return sayMore(format, 'hits', page.next_cursor);
        }
        // pages as paging prints them: the total is what has been read, all of it once the last page is in
        let read = 0;
        const fetch = async (cursor: string | undefined): Promise<Paged & HitList> => {
          const page = await service.detectionHits(id, { since: o.since, limit: o.limit ?? HITS_PAGE_MAX, cursor });
          read += page.hits.length;
          return { ...page, records: page.hits, total: { relation: 'eq', value: read } };
        };
        const shape: PageShape<Paged & HitList> = { format, noun: 'hits', rows: (page) => hitRows(page.hits), columns: () => HIT_COLUMNS, warnings: () => [] };
        await printAll(fetch, o.cursor, shape);
      }),
    );
}
