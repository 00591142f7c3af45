import { FieldList, FieldQuery } from '../../api/fields.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

export const fieldRoutes: Routes = (app, engine) => {
  typed(app).get('/v1/admin/fields', { schema: { tags: ['Fields'], querystring: FieldQuery, response: { 200: FieldList, ...errors(400, 401, 403, 404, 422) } } }, async (req) => ({
    fields: engine.fields.list(caller(req), req.query),
  }));
};
