import { Type, type Static } from '@sinclair/typebox';
import { DateTime, FieldPath, Id, Literals, Nullable } from './common.js';
import { LIMITS } from './limits.js';
import { HostedSourcePut, Source } from './sources.js';

const Glob = Type.String({ minLength: 1, maxLength: LIMITS.fieldPath });
const Globs = Type.Array(Glob, { maxItems: LIMITS.connectorGlobs });
const HeaderName = Type.String({ minLength: 1, maxLength: LIMITS.fieldPath, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" });
const Headers = Type.Record(HeaderName, Type.String({ maxLength: LIMITS.url }), { maxProperties: LIMITS.connectorHeaders });

/** `directory`: files under `path` that match `include` and none of `exclude`, read as they grow. */
export const DirectoryConfig = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: LIMITS.url, description: 'an absolute directory path on the server' }),
    include: Type.Optional(Type.Array(Glob, { minItems: 1, maxItems: LIMITS.connectorGlobs, default: ['*.log'] })),
    exclude: Type.Optional(Globs),
    /** under `svc serve`, read new lines as they are written (file-system events, with polling) */
    follow: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type DirectoryConfig = Static<typeof DirectoryConfig>;

/** `http`: a URL polled for NDJSON, JSON (an array, or the array at `records_path`) or CSV. */
export const HttpConfig = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: LIMITS.url, pattern: '^https?://' }),
    headers: Type.Optional(Headers),
    format: Type.Optional(Literals(['ndjson', 'json', 'csv'] as const)),
    /** dotted path of the records array in a JSON body (`data.items`) */
    records_path: Type.Optional(FieldPath),
    /** dotted path of the next page's URL in a JSON body; a `Link: <…>; rel="next"` header is followed too */
    next_link_path: Type.Optional(FieldPath),
    /** query parameter that carries the highest `cursor_field` seen so far (pagination and incremental syncs) */
    cursor_param: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.fieldPath })),
    /** record field whose highest value marks what has been read */
    cursor_field: Type.Optional(FieldPath),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000, default: 30_000 })),
    max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.connectorPages, default: 100 })),
  },
  { additionalProperties: false },
);
export type HttpConfig = Static<typeof HttpConfig>;

/** Secrets a connector sends: stored encrypted with the data dir's key, never returned. */
export const ConnectorCredentials = Type.Object(
  {
    bearer_token: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.secret })),
    headers: Type.Optional(Type.Record(HeaderName, Type.String({ maxLength: LIMITS.secret }), { maxProperties: LIMITS.connectorHeaders })),
  },
  { additionalProperties: false },
);
export type ConnectorCredentials = Static<typeof ConnectorCredentials>;

export const CONNECTOR_KINDS = ['directory', 'http'] as const;
export type ConnectorKindName = (typeof CONNECTOR_KINDS)[number];

export const ConnectorKind = Type.Object({
  connector_id: Type.Integer(),
  kind: Literals(CONNECTOR_KINDS),
  name: Type.String(),
  description: Type.String(),
  config_schema: Type.Unknown(),
  credentials_schema: Nullable(Type.Unknown()),
});
export type ConnectorKind = Static<typeof ConnectorKind>;
export const ConnectorList = Type.Object({ connectors: Type.Array(ConnectorKind) });
export type ConnectorList = Static<typeof ConnectorList>;

export const ConnectorSourcePut = Type.Composite(
  [
    Type.Omit(HostedSourcePut, ['source_type', 'connector_id']),
    Type.Object({
      source_type: Type.Literal('connector'),
      /** a connector kind by its id or its name (`directory`, `http`) */
      connector_id: Type.Union([Type.Integer(), Literals(CONNECTOR_KINDS)]),
      connector_config: Type.Record(Type.String(), Type.Unknown(), { maxProperties: LIMITS.configMembers }),
      connector_credentials: Type.Optional(ConnectorCredentials),
    }),
  ],
  { additionalProperties: false },
);
export type ConnectorSourcePut = Static<typeof ConnectorSourcePut>;

export const SyncStream = Type.Object(
  {
    /** a glob under the directory, or a path (or URL) under the HTTP connector's url */
    name: Type.String({ minLength: 1, maxLength: LIMITS.url }),
    selected: Type.Boolean({ default: true }),
    sync_mode: Literals(['full_refresh', 'incremental'] as const),
    cursor_field: Type.Optional(Type.Union([FieldPath, Type.Array(FieldPath, { minItems: 1, maxItems: 1 })])),
    primary_key: Type.Optional(Type.Union([FieldPath, Type.Array(FieldPath, { minItems: 1, maxItems: 1 })])),
  },
  { additionalProperties: false },
);
export type SyncStream = Static<typeof SyncStream>;
export const SyncCatalog = Type.Object({ streams: Type.Array(SyncStream, { maxItems: LIMITS.connectorStreams }) }, { additionalProperties: false });
export type SyncCatalog = Static<typeof SyncCatalog>;

export const ConnectionRequest = Type.Object(
  {
    sync_catalog: SyncCatalog,
    cron_expression: Type.Optional(Nullable(Type.String({ maxLength: LIMITS.cron }))),
    cron_timezone: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.timezone, default: 'UTC' })),
    schedule_type: Type.Optional(Nullable(Literals(['manual', 'cron'] as const))),
  },
  { additionalProperties: false },
);
export type ConnectionRequest = Static<typeof ConnectionRequest>;

export const Integration = Type.Object({
  integration_connection_id: Type.String(),
  integration_destination_id: Type.String(),
  integration_source_definition_id: Type.String(),
  integration_source_definition_name: Type.String(),
  integration_source_id: Type.String(),
  connection_status: Literals(['active', 'inactive'] as const),
  credential_status: Literals(['configured', 'not_configured'] as const),
  destination_status: Type.String(),
  oauth_mode: Type.String(),
  provider_key: Type.String(),
  schedule_type: Nullable(Literals(['manual', 'cron'] as const)),
  cron_expression: Nullable(Type.String()),
  source_id: Type.Integer(),
  stream_config: Type.Record(Type.String(), Type.Unknown()),
});
export type Integration = Static<typeof Integration>;
export const IntegrationConnection = Type.Object({ integration: Integration, source: Source });
export type IntegrationConnection = Static<typeof IntegrationConnection>;

/** One sync of a connector source: the ingest runs it started carry its id as `connector_run_id`. */
export const ConnectorRun = Type.Object({
  connector_run_id: Type.String(),
  tenant_id: Type.String(),
  source_id: Type.Integer(),
  trigger: Literals(['manual', 'cron', 'follow'] as const),
  status: Literals(['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const),
  job_id: Type.String(),
  ingest_run_ids: Type.Array(Type.String()),
  objects: Type.Integer(),
  bytes: Type.Integer(),
  /** what the sync passed over and why (a corrupt .gz file, an unreadable HTTP record), the first 100 */
  problems: Type.Array(Type.Object({ ref: Type.String(), reason: Type.String() })),
  error_message: Nullable(Type.String()),
  created_at: DateTime,
  started_at: Nullable(DateTime),
  completed_at: Nullable(DateTime),
});
export type ConnectorRun = Static<typeof ConnectorRun>;
export const ConnectorRunList = Type.Object({ syncs: Type.Array(ConnectorRun) });
export const ConnectorRunPath = Type.Object({ source_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), connector_run_id: Id });
