// The entry of dist/cli/svc.mjs, the CLI bundled for node (scripts/build-cli.mjs), which bin/svc.js
// runs. As in the single executable (sea/start.ts), the engine is told where its files are before
// the CLI runs: import.meta.url is the bundle's own, not that of the modules it was made from.
import { fileURLToPath } from 'node:url';
import { setTextWorkerFile } from '../../engine/text/workerFile.js';
import { setOnnxWorkerFile } from '../../engine/vector/embedders/onnx/workerFile.js';
import { readConsoleDir, setConsoleSource } from '../../server/console/files.js';

/** the text worker, bundled beside this file */
const TEXT_WORKER = new URL('text-worker.mjs', import.meta.url);
/** the onnx embedder's worker as tsc built it: it loads its packages from node_modules anyway */
const ONNX_WORKER = new URL('../engine/vector/embedders/onnx/onnxWorker.js', import.meta.url);
/** the built console: dist/console */
const CONSOLE = fileURLToPath(new URL('../console/', import.meta.url));

setTextWorkerFile(() => TEXT_WORKER);
setOnnxWorkerFile(() => ONNX_WORKER);
setConsoleSource(() => readConsoleDir(CONSOLE));

// imported only now, so that the lookups above are in place before any command runs
await import('../main.js');
