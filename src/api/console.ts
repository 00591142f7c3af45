import { Type, type Static } from '@sinclair/typebox';
import { DateTime } from './common.js';
import { Me } from './identity.js';
import { LIMITS } from './limits.js';

/** The code of a sign-in link printed by `svc console`. */
export const ConsoleSignIn = Type.Object({ code: Type.String({ minLength: 1, maxLength: LIMITS.authorization }) }, { additionalProperties: false });
export type ConsoleSignIn = Static<typeof ConsoleSignIn>;

/** The signed-in user (as `GET /v1/me`), the CSRF token every state-changing call sends, and when the session ends. */
export const ConsoleSession = Type.Composite([Me, Type.Object({ csrf_token: Type.String(), expires_at: DateTime })]);
export type ConsoleSession = Static<typeof ConsoleSession>;

/** What `svc console` prints: a one-time sign-in link. */
export const ConsoleLink = Type.Object({ url: Type.String(), user_id: Type.String(), expires_at: DateTime });
export type ConsoleLink = Static<typeof ConsoleLink>;
