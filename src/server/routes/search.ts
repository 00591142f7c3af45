import { SearchEnvelope, SearchRequest } from '../../api/search.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

export const searchRoutes: Routes = (app, engine) => {
  typed(app).post('/v1/search', { schema: { tags: ['Search and query'], body: SearchRequest, response: { 200: SearchEnvelope, ...errors(400, 401, 403, 404, 409, 422, 503) } } }, async (req) =>
    engine.search.run(caller(req), req.body),
  );
};
