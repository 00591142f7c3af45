/**
 * Who may call each route: the one place where this is decided. A route the server registers
 * without an entry here makes the app refuse to start.
 * - auth: none (public, or authenticated by its own signed URL), user (any valid token, no tenant
 *   header), tenant (token + tenant header), platform (a platform key; no tenant header), ingest (the
 *   route's source's ingest token, or tenant credentials as for tenant)
 * - role: admin for creating, changing and deleting; reads and queries are for any member
 * - session: only a signed-in user's console session (minting keys); API keys get 403
 */
export type AuthMode = 'none' | 'user' | 'tenant' | 'platform' | 'ingest';
export interface RoutePolicy { auth: AuthMode; role?: 'member' | 'admin'; session?: true }

const member: RoutePolicy = { auth: 'tenant', role: 'member' };
const admin: RoutePolicy = { auth: 'tenant', role: 'admin' };
const platform: RoutePolicy = { auth: 'platform' };
const ingest: RoutePolicy = { auth: 'ingest', role: 'admin' };

export const POLICY: Record<string, RoutePolicy> = {
  'GET /healthz': { auth: 'none' },
  'GET /openapi.json': { auth: 'none' },

  'GET /': { auth: 'none' },
  'GET /console/:file': { auth: 'none' },
  'POST /v1/console/session': { auth: 'none' },
  'GET /v1/console/session': { auth: 'user' },
  'DELETE /v1/console/session': { auth: 'user' },

  'GET /v1/me': { auth: 'user' },
  'POST /v1/admin/members': admin,
  'GET /v1/admin/members': member,
  'POST /v1/admin/api-keys': { ...admin, session: true },
  'GET /v1/admin/api-keys': member,
  'DELETE /v1/admin/api-keys/:id': admin,
  'POST /v1/admin/platform-keys': { ...admin, session: true },
  'GET /v1/admin/platform-keys': member,
  'DELETE /v1/admin/platform-keys/:id': admin,

  'POST /v1/platform/keys': platform,
  'POST /v1/platform/tenants': platform,
  'GET /v1/platform/tenants': platform,
  'DELETE /v1/platform/tenants/:tenant_id': platform,

  'POST /v1/admin/datasets': admin,
  'GET /v1/datasets': member,
  'GET /v1/datasets/:dataset_id': member,
  'DELETE /v1/admin/datasets/:dataset_id': admin,
  'DELETE /v1/admin/datasets/:dataset_id/records/:record_id': admin,
  'DELETE /v1/admin/uploads/:upload_session_id': admin,
  'DELETE /v1/admin/objects': admin,
  'GET /v1/admin/fields': member,

  'PUT /v1/admin/sources/:source_id': admin,
  'PUT /v1/admin/hosted-sources/:source_id': admin,
  'GET /v1/admin/sources/:source_id': member,
  'GET /v1/admin/sources': member,
  'DELETE /v1/admin/sources/:source_id': admin,
  'GET /v1/admin/connectors': member,
  'PUT /v1/admin/connector-sources/:source_id': admin,
  'GET /v1/admin/connector-sources/:source_id': member,
  'POST /v1/admin/connector-sources/:source_id/connection': admin,
  'POST /v1/admin/connector-sources/:source_id/sync': admin,
  'GET /v1/admin/connector-sources/:source_id/syncs': member,
  'GET /v1/admin/connector-sources/:source_id/syncs/:connector_run_id': member,
  'POST /v1/admin/sources/:source_id/ingest-token': admin,
  'DELETE /v1/admin/sources/:source_id/ingest-token': admin,
  'GET /v1/admin/data-deletion-jobs/:job_id': member,

  'POST /v1/search': member,
  'POST /v1/sql': member,
  'POST /v1/admin/datasets/:dataset_id/schema/rebuild': admin,
  'GET /v1/admin/datasets/:dataset_id/schema/rebuilds/:job_id': member,
  'POST /v1/admin/semantic/filters/backfill': admin,
  'GET /v1/admin/semantic/filters/backfill/:job_id': member,
  'POST /v1/admin/reindex/jobs': admin,
  'GET /v1/admin/reindex/jobs/:job_id': member,
  'POST /v1/admin/reindex/jobs/:job_id/cancel': admin,

  'POST /v1/views': admin,
  'GET /v1/views': member,
  'GET /v1/views/:view_id': member,
  'DELETE /v1/views/:view_id': admin,
  'GET /v1/views/:view_id/records': member,

  'POST /v1/admin/detections': admin,
  'GET /v1/admin/detections': member,
  'GET /v1/admin/detections/:id': member,
  'PUT /v1/admin/detections/:id': admin,
  'DELETE /v1/admin/detections/:id': admin,
  'POST /v1/admin/detections/:id/test': admin,
  'GET /v1/detections/:id/hits': member,
  'POST /v1/admin/query-endpoints': admin,
  'GET /v1/admin/query-endpoints': member,
  'GET /v1/admin/query-endpoints/:name': member,
  'PUT /v1/admin/query-endpoints/:name': admin,
  'DELETE /v1/admin/query-endpoints/:name': admin,
  'GET /v1/query-endpoints/openapi.json': member,
  'GET /v1/query-endpoints/:name': member,
  'POST /v1/query-endpoints/:name': member,

  'GET /v1/ingest/runs/:ingest_run_id': member,
  'GET /v1/ingest/runs': member,
  'POST /v1/ingest/runs/:ingest_run_id/retry': admin,

  'GET /v1/admin/jobs': member,
  'GET /v1/admin/jobs/:job_id': member,
  'POST /v1/admin/jobs/:job_id/cancel': admin,
  'POST /v1/export': member,
  'GET /v1/export': member,
  'GET /v1/export/:export_id': member,
  'DELETE /v1/export/:export_id': admin,
  'GET /v1/export/:export_id/download': { auth: 'none' },
  'GET /v1/object-image-url': member,
  'GET /v1/object-images/download': { auth: 'none' },
  'POST /v1/ingest/sources/:source_key/stream': ingest,
  'POST /v1/ingest/sources/:source_key/uploads': ingest,
  'POST /v1/ingest/sources/:source_key/uploads/parts': ingest,
  'POST /v1/ingest/sources/:source_key/uploads/complete': ingest,
  'POST /v1/ingest/sources/:source_key/uploads/abort': ingest,
  'PUT /v1/uploads/:upload_session_id/parts/:part_number': { auth: 'none' },
};

export const policyKey = (method: string, url: string) => `${method} ${url}`;
