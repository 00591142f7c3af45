import { Me } from '../../api/identity.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

export const identityRoutes: Routes = (app, engine) => {
  typed(app).get('/v1/me', { config: { auth: 'user' }, schema: { tags: ['Identity'], response: { 200: Me, ...errors(401) } } }, async (req) =>
    engine.directory.me(req.principal!),
  );
};
