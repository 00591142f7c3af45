import { Type, type Static } from '@sinclair/typebox';
import { DatasetIdRef, DateTime, FieldPath, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';
import { ResultRecord, SearchRequest } from './search.js';
import { SqlRecord } from './sql.js';

export const Severity = Literals(['info', 'low', 'medium', 'high', 'critical'] as const);
export type Severity = Static<typeof Severity>;

/** Exactly one of the two (checked by the engine): a search request, or one read-only SQL statement (scheduled only). */
export const DetectionQuery = Type.Object(
  {
    search_request: Type.Optional(SearchRequest),
    /** may name `$since` and `$until`: the previous run's cutoff and this run's, bound by DuckDB */
    sql: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.sql })),
  },
  { additionalProperties: false },
);
export type DetectionQuery = Static<typeof DetectionQuery>;

export const DetectionTrigger = Type.Object(
  {
    on_ingest: Type.Boolean(),
    /** five fields (or six, with seconds first) */
    cron: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.cron }))),
    /** IANA; UTC when absent */
    timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.timezone }))),
  },
  { additionalProperties: false },
);
export type DetectionTrigger = Static<typeof DetectionTrigger>;

/** A duration: a whole number and a unit (s, m, h, d). */
export const Window = Type.String({ pattern: '^[1-9][0-9]{0,5}[smhd]$', maxLength: 7 });

export const Threshold = Type.Object(
  {
    count_gte: Type.Integer({ minimum: 1, maximum: LIMITS.thresholdCount }),
    window: Window,
    /** the field whose value makes a group */
    group_by: Type.Optional(Nullable(FieldPath)),
    /** or: a regular expression with one capture group, matched against the body; the capture makes a group */
    group_pattern: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.groupPattern }))),
  },
  { additionalProperties: false },
);
export type Threshold = Static<typeof Threshold>;

export const WebhookAction = Type.Object(
  {
    type: Type.Literal('webhook'),
    url: Type.String({ minLength: 1, maxLength: LIMITS.url, pattern: '^https?://' }),
    /** signs each delivery (HMAC-SHA256 of the body); write-only */
    secret: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: LIMITS.secret }))),
  },
  { additionalProperties: false },
);
export type WebhookAction = Static<typeof WebhookAction>;

export const DetectionCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: LIMITS.name }),
    description: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.description }))),
    severity: Severity,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    datasets: Type.Array(DatasetIdRef, { minItems: 1, maxItems: LIMITS.datasets }),
    query: DetectionQuery,
    trigger: DetectionTrigger,
    threshold: Type.Optional(Nullable(Threshold)),
    actions: Type.Optional(Type.Array(WebhookAction, { maxItems: LIMITS.detectionActions })),
  },
  { additionalProperties: false },
);
export type DetectionCreate = Static<typeof DetectionCreate>;

/** An action as the API shows it: its secret never leaves the server. */
export const ActionView = Type.Object({ type: Type.Literal('webhook'), url: Type.String(), secret_set: Type.Boolean() });

export const Detection = Type.Object({
  detection_id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  severity: Severity,
  enabled: Type.Boolean(),
  datasets: Type.Array(Type.String()),
  query: DetectionQuery,
  trigger: DetectionTrigger,
  threshold: Nullable(Threshold),
  actions: Type.Array(ActionView),
  created_at: DateTime,
  updated_at: DateTime,
  /** the next scheduled run, when the detection has a cron */
  next_run_at: Nullable(DateTime),
  last_run_at: Nullable(DateTime),
});
export type Detection = Static<typeof Detection>;
export const DetectionList = Type.Object({ detections: Type.Array(Detection), next_cursor: Nullable(Type.String()) });
export type DetectionList = Static<typeof DetectionList>;
export const DetectionPath = Type.Object({ id: Id });

export const Hit = Type.Object({
  hit_id: Type.String(),
  detection_id: Type.String(),
  severity: Severity,
  triggered_at: DateTime,
  /** the group that reached the threshold; null without a threshold or `group_by` */
  group_value: Nullable(Type.String()),
  count: Type.Integer(),
  window_start: DateTime,
  window_end: DateTime,
  /** the first 100 matching records (and at most `LIMITS.hitBytes` of them), with provenance; a SQL detection's first rows */
  records: Type.Array(Type.Union([ResultRecord, SqlRecord])),
});
export type Hit = Static<typeof Hit>;
export const HitList = Type.Object({ hits: Type.Array(Hit), next_cursor: Nullable(Type.String()) });
export type HitList = Static<typeof HitList>;
export const HitListQuery = Type.Object({
  since: Type.Optional(DateTime),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.cursor })),
});
export type HitListQuery = Static<typeof HitListQuery>;
export const DetectionListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.cursor })),
});
export type DetectionListQuery = Static<typeof DetectionListQuery>;

export const DetectionTest = Type.Object({ since: Type.Optional(DateTime) }, { additionalProperties: false });
export type DetectionTest = Static<typeof DetectionTest>;
/** What a dry run would have fired: hits without ids, nothing stored, no action called. */
export const DetectionTestResult = Type.Object({
  hits: Type.Array(Type.Omit(Hit, ['hit_id'])),
  records_evaluated: Type.Integer(),
  records_matched: Type.Integer(),
  /** false when the run stopped at its bound (`LIMITS.detectionTestRecords` records, or the search timeout): it read the oldest first */
  complete: Type.Boolean(),
});
export type DetectionTestResult = Static<typeof DetectionTestResult>;
