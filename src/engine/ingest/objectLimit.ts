/** Largest object one ingest accepts. */
export const MAX_OBJECT_BYTES = 10 * 2 ** 30;
