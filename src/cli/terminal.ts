/**
 * What the terminal on stdout allows: its width (tables fit it) and colour. A pipe gets neither, so
 * that what a script reads never depends on the window it ran in.
 */
export const terminalWidth = (out: { isTTY?: boolean; columns?: number } = process.stdout): number | undefined =>
  out.isTTY && out.columns ? out.columns : undefined;

/** Colour only on a terminal that can show it, and never when NO_COLOR is set (https://no-color.org). */
export const colourAllowed = (out: { isTTY?: boolean } = process.stdout, env = process.env): boolean =>
  Boolean(out.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
