import { ConnectionRequest, ConnectorList, ConnectorRun, ConnectorRunList, ConnectorRunPath, ConnectorSourcePut, IntegrationConnection } from '../../api/connectors.js';
import { Source, SourcePath } from '../../api/sources.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Connectors'];
const base = '/v1/admin/connector-sources/:source_id';

export const connectorRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/v1/admin/connectors', { schema: { tags, response: { 200: ConnectorList, ...errors(401, 403) } } }, async () => engine.connectors.kinds());
  r.put(base, { schema: { tags, params: SourcePath, body: ConnectorSourcePut, response: { 200: Source, ...errors(400, 401, 403, 404, 409, 422, 507) } } }, async (req) =>
    engine.connectors.put(caller(req), req.params.source_id, req.body),
  );
  r.get(base, { schema: { tags, params: SourcePath, response: { 200: IntegrationConnection, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.connectors.get(caller(req), req.params.source_id),
  );
  r.post(`${base}/connection`, { schema: { tags, params: SourcePath, body: ConnectionRequest, response: { 200: IntegrationConnection, ...errors(400, 401, 403, 404, 422, 507) } } }, async (req) =>
    engine.connectors.connect(caller(req), req.params.source_id, req.body),
  );
  r.post(`${base}/sync`, { schema: { tags, params: SourcePath, response: { 202: ConnectorRun, ...errors(400, 401, 403, 404, 409, 507) } } }, async (req, reply) =>
    reply.status(202).send(await engine.connectors.sync(caller(req), req.params.source_id)),
  );
  r.get(`${base}/syncs`, { schema: { tags, params: SourcePath, response: { 200: ConnectorRunList, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.connectors.syncRuns(caller(req), req.params.source_id),
  );
  r.get(`${base}/syncs/:connector_run_id`, { schema: { tags, params: ConnectorRunPath, response: { 200: ConnectorRun, ...errors(400, 401, 403, 404) } } }, async (req) =>
    engine.connectors.syncRun(caller(req), req.params.source_id, req.params.connector_run_id),
  );
};
