/**
 * Every bound the API and the input files carry, in one place: the schemas, the engine and the
 * README's limits table read them from here. A value past one of them is refused before any work.
 */
export const LIMITS = {
  /** ids in paths, headers and bodies: tenant, job, run, search, upload session, key ids */
  id: 128,
  /** a dataset id: a slug */
  datasetId: 63,
  /** a source key */
  sourceKey: 128,
  /** a path parameter as the router sees it: longer is 414 before any route runs (each parameter's own cap, far below, is a 422) */
  pathParam: 8192,
  /** names and e-mail addresses */
  name: 255,
  /** free text: descriptions */
  description: 4096,
  /** a field path named in a request (where, collapse, sort, aggregations, transforms, search and semantic configs) */
  fieldPath: 256,
  /** a URL, role reference or object prefix a source names */
  url: 2048,
  /** a query or document prefix a source's embedder puts before each text (`query: `, `passage: `) */
  embedderPrefix: 64,
  /** members of an open-ended config object (parse_config) */
  configMembers: 64,
  /** the `text` of a search */
  text: 4096,
  /** distinct query terms a search's text and q may look up */
  queryTerms: 128,
  /** the `q` of a search */
  q: 4096,
  /** clauses (terms, phrases, field tests) in one q */
  qClauses: 1024,
  /** parentheses and NOT nested in one q */
  qDepth: 32,
  /** one `where` value, or one of an `in`/`nin` list, as a string */
  whereValue: 4096,
  /** `where` items in one search */
  whereItems: 64,
  /** values of one `in` / `nin` */
  inValues: 10_000,
  /** datasets one search names */
  datasets: 100,
  /** aggregations in one search */
  aggregations: 20,
  /** buckets one histogram or date_histogram aggregation may produce */
  buckets: 10_000,
  /** distinct values one terms aggregation may count */
  termsValues: 100_000,
  /** keys of one search's `sort` */
  sortKeys: 5,
  /** a cursor */
  cursor: 4096,
  /** a search's ranking kept for paging: pages stop there */
  rankingDepth: 10_000,
  /** the records of one search page, in bytes (a page ends early past it; its cursor goes on) */
  pageBytes: 4 * 2 ** 20,
  /** the characters of a record's body read for its snippets */
  snippetScan: 16_384,
  /** nesting of objects and arrays in a JSON request body */
  bodyDepth: 32,
  /** a JSON request body, in bytes (parsing takes the event loop: 2 MiB is about 30 ms of it) */
  bodyBytes: 2 * 2 ** 20,
  /** issues one validation error lists */
  validationIssues: 50,
  /** the Authorization header */
  authorization: 8192,
  /** an `x-request-id` a client sends; a longer (or unsafe) one is replaced by the server's own */
  requestId: 64,
  /** nesting of objects and arrays in one ingested record (Elasticsearch's mapping depth limit) */
  recordDepth: 20,
  /** distinct fields a dataset may discover; a record that would add more is malformed. Also the
   *  most fields one config may list (text_fields, semantic fields, drop, rename) */
  datasetFields: 1000,
  /** an ingested record's id, in UTF-8 bytes (it is part of a key); a longer one is malformed */
  recordId: 1024,
  /** one ingested line */
  lineBytes: 2 ** 20,
  /** an uploaded object's file name, kept as metadata */
  filename: 1024,
  /** a SQL statement */
  sql: 100_000,
  /** the bytes of one SQL result page as JSON */
  sqlResultBytes: 32 * 2 ** 20,
  /** records one materialized view may hold, and one ranked export may rank (SVC_VIEW_MAX_RECORDS lowers or raises it); more is refused, never cut */
  viewRecords: 1_000_000,
  /** columns one CSV or Parquet export may select */
  exportFields: 200,
  /** parameters one query endpoint declares (and values of one string[] parameter) */
  endpointParams: 64,
  /** a cron expression (a detection's trigger) */
  cron: 255,
  /** an IANA time zone name */
  timezone: 128,
  /** the count a detection's threshold may ask for (a group keeps at most this many matches in memory and store) */
  thresholdCount: 1000,
  /** a detection's group_pattern (a regular expression) */
  groupPattern: 1024,
  /** a group value as a detection keeps it (longer ones are cut) */
  groupValue: 256,
  /** a webhook secret */
  secret: 256,
  /** webhook actions of one detection */
  detectionActions: 10,
  /** detections one tenant may hold (each on-ingest one runs for every batch) */
  detections: 1000,
  /** records one hit keeps, and their bytes as JSON */
  hitRecords: 100,
  hitBytes: 256 * 2 ** 10,
  /** hits one detection keeps (the oldest go) */
  hitsKept: 10_000,
  /** hits one detection test (dry run) shows */
  testHits: 20,
  /** records one detection test (dry run) reads */
  detectionTestRecords: 1_000_000,
  /** globs one directory connector includes or excludes, and streams one sync catalog names */
  connectorGlobs: 64,
  connectorStreams: 64,
  /** headers one HTTP connector sends (config and credentials each) */
  connectorHeaders: 32,
  /** pages one HTTP connector sync may read */
  connectorPages: 10_000,
  /** one HTTP connector page, in bytes (it is parsed whole: 8 MiB is tens of ms) */
  connectorPageBytes: 8 * 2 ** 20,
  /** files one directory connector keeps a checkpoint for; more matching files are left for later syncs */
  connectorFiles: 10_000,
  /** bytes one directory connector object may hold (a larger backlog becomes several objects) */
  connectorChunkBytes: 16 * 2 ** 20,
} as const;

/** part numbers of one multipart upload run from 1 to this (the spec's bound) */
export const PART_NUMBER_MAX = 10_000;
