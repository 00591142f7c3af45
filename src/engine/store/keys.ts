import type { Key } from './db.js';

/** A kind of key: `[scope, name, ...rest]`; leaving out trailing parts gives the prefix every such key shares. */
const kind =
  <A extends (string | number | undefined)[]>(name: string) =>
  (scope: string, ...rest: A): Key => [scope, name, ...(rest as Key)];

/**
 * Every key of the `meta` table, one kind each, in one place. A tenant's keys begin with its id;
 * the process-wide ones with SYSTEM. Records and ids live in tables of their own (`[t, d, seq]`,
 * `[t, d, id]`).
 */
export const keys = {
  // process-wide (SYSTEM)
  /** a console sign-in link already exchanged (value: when it would have expired, ms) */
  signInUsed: kind<[linkId?: string]>('signin'),
  /** a signed-out console session, by the hash of its token (value: when it expires, ms) */
  sessionEnded: kind<[sessionId?: string]>('endsess'),
  /** when a spent link or an ended session can be forgotten (value: its key) */
  authExpiry: kind<[expiresAtMs?: number, kind?: string, id?: string]>('authexp'),
  tenant: kind<[tenantId?: string]>('tenant'),
  user: kind<[userId?: string]>('user'),
  email: kind<[email?: string]>('email'),
  membership: kind<[userId?: string, tenantId?: string]>('membership'),
  apiKey: kind<[keyIdOrHash?: string]>('key'),
  ingestToken: kind<[tokenId?: string]>('itoken'),
  /** the job queue: due time, job id → tenant */
  jobQueue: kind<[dueMs?: number, jobId?: string]>('jobq'),

  // per tenant
  member: kind<[userId?: string]>('member'),
  counter: kind<[name: string]>('counter'),
  dataset: kind<[datasetId?: string]>('dataset'),
  source: kind<[sourceId?: number]>('source'),
  sourceKey: kind<[sourceKey?: string]>('srckey'),
  run: kind<[runId?: string]>('run'),
  job: kind<[jobId?: string]>('job'),
  /** a tenant deletion's record, kept in the platform tenant */
  deletionRecord: kind<[jobId: string]>('ddjob'),
  upload: kind<[sessionId?: string]>('upload'),
  export: kind<[exportId?: string]>('export'),
  view: kind<[viewId?: string]>('view'),
  /** a query endpoint's definition */
  endpoint: kind<[name?: string]>('endpoint'),
  /** a detection's definition */
  detection: kind<[detectionId?: string]>('det'),
  /** the last seq of a dataset a detection has evaluated on ingest (moved in the transaction that stores its hits) */
  detectionCursor: kind<[detectionId: string, datasetId?: string]>('detseq'),
  /** the recent matches of one group of a threshold detection */
  detectionGroup: kind<[detectionId: string, group?: string]>('detgrp'),
  /** where a detection's scheduled runs stand: the previous cutoff, the next run's job */
  detectionSchedule: kind<[detectionId: string]>('detrun'),
  /** a hit a detection stored */
  hit: kind<[detectionId: string, hitId?: string]>('hit'),
  /** a connector source's kind, config, sealed credentials and schedule */
  connector: kind<[sourceId?: number]>('conn'),
  /** where a connector source's stream stands (file checkpoints, an HTTP cursor and ETag): moved in the transaction that stores what was read */
  connectorCheckpoint: kind<[sourceId: number, stream?: string]>('conncp'),
  /** one sync of a connector source */
  connectorRun: kind<[sourceId: number, runId?: string]>('crun'),
  viewRecord: kind<[viewId: string, pos?: number]>('viewrec'),
  viewRef: kind<[datasetId: string, recordId?: string, viewId?: string, pos?: number]>('viewref'),
  /** a discovered field's count and sample, per value type */
  field: kind<[datasetId: string, path?: string, type?: string]>('field'),
  /** a deleted record the text index may still hold */
  textTomb: kind<[datasetId: string, seq?: number]>('tomb'),
  /** a deleted record the SQL table may still hold */
  sqlTomb: kind<[datasetId: string, seq?: number]>('sqltomb'),
  /** LMDB's copy of the SQL table's columns */
  sqlColumns: kind<[datasetId: string]>('sqlcols'),
  /** a run whose records wait for their vectors */
  vectorPending: kind<[datasetId: string, runId?: string]>('vpend'),
  /** the embedding job of a dataset */
  vectorJob: kind<[datasetId: string]>('vjob'),
  /** the generation of each derived index that serves a dataset: written together, in the transaction that promotes */
  textGeneration: kind<[datasetId: string]>('tgen'),
  sqlGeneration: kind<[datasetId: string]>('sqlgen'),
  vectorGeneration: kind<[datasetId: string]>('vgen'),
};
