// Under vitest the engine runs from its TypeScript source; the worker then runs the built copy (npm test builds it first).
const BUILT = new URL(import.meta.url.endsWith('.ts') ? '../../../../../dist/engine/vector/embedders/onnx/onnxWorker.js' : './onnxWorker.js', import.meta.url);

let locate: () => string | URL = () => BUILT;

/** The script the onnx worker runs: the built onnxWorker.js beside this module, unless set otherwise. */
export const onnxWorkerFile = (): string | URL => locate();

/** Where the onnx worker's script is found when it starts (the single executable unpacks its own copy). */
export function setOnnxWorkerFile(find: () => string | URL): void {
  locate = find;
}
