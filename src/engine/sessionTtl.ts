/** How long a console session lasts unless asked otherwise: a day. */
export const DEFAULT_SESSION_TTL = 24 * 3600;
