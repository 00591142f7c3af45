import { Me, Member, MemberCreate, MemberList } from '../../api/identity.js';
import { caller } from '../auth.js';
import type { Routes } from './types.js';
import { errors, typed } from './types.js';

const tags = ['Identity'];

export const identityRoutes: Routes = (app, engine) => {
  const r = typed(app);
  r.get('/v1/me', { schema: { tags, response: { 200: Me, ...errors(401) } } }, async (req) => engine.directory.me(req.principal!));
  r.post('/v1/admin/members', { schema: { tags, body: MemberCreate, response: { 201: Member, ...errors(400, 401, 403, 422) } } }, async (req, reply) =>
    reply.status(201).send(await engine.identity.addMember(caller(req), req.body)),
  );
  r.get('/v1/admin/members', { schema: { tags, response: { 200: MemberList, ...errors(400, 401, 403) } } }, async (req) => ({
    members: engine.identity.members(caller(req)),
    next_cursor: null,
  }));
};
