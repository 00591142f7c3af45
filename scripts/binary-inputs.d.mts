/** Where scripts/build-binary.mjs records what dist/bin/svc was made from. */
export const STAMP: string;
/** A hash of what dist/bin/svc is made from. */
export function binaryInputs(root: string): string;
