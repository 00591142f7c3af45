/** A setting from the environment that must be a number above 0: anything else (unset, 0, text) is the fallback. */
export const positive = (v: string | undefined, fallback: number): number => (v && Number(v) > 0 ? Number(v) : fallback);
