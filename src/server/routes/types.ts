import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/index.js';

/** A route group: registers its routes on the app, each a few lines around one engine call. */
export type Routes = (app: FastifyInstance, engine: Engine) => void;

export const typed = (app: FastifyInstance) => app.withTypeProvider<TypeBoxTypeProvider>();

export const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, { $ref: c === 422 ? 'HTTPValidationError#' : 'ApiError#' }]));
