// Under vitest the engine runs from its TypeScript source; the worker then runs the built copy (npm test builds it first).
const BUILT = new URL(import.meta.url.endsWith('.ts') ? '../../../dist/engine/text/textWorker.js' : './textWorker.js', import.meta.url);

let locate: () => string | URL = () => BUILT;

/** The script the text worker runs: the built textWorker.js beside this module, unless set otherwise. */
export const textWorkerFile = (): string | URL => locate();

/** Where the text worker's script is found when it starts (the single executable unpacks its own copy). */
export function setTextWorkerFile(find: () => string | URL): void {
  locate = find;
}
