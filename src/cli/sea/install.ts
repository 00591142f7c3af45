import { getAsset, isSea } from 'node:sea';
import { setConsoleSource } from '../../server/console/files.js';
import { setTextWorkerFile } from '../../engine/text/workerFile.js';
import { setOnnxWorkerFile } from '../../engine/vector/embedders/onnx/workerFile.js';
import { setDefaultEmbeddingsFile } from '../../engine/vector/embedders/wordVectors.js';
import { assetFile } from './assets.js';
import { seaManifest } from './manifest.js';

const CONSOLE = 'console/';

/** In the single executable, the text and onnx workers and the builtin embedder's vectors are its own copies, unpacked on first use; the console's files are read from it. */
if (isSea()) {
  setTextWorkerFile(() => assetFile('text-worker.cjs'));
  setOnnxWorkerFile(() => assetFile('onnx-worker.cjs'));
  setDefaultEmbeddingsFile(() => assetFile('wink-sg-100d.bin'));
  setConsoleSource(() => new Map(Object.keys(seaManifest().assets).filter((n) => n.startsWith(CONSOLE)).map((n) => [n.slice(CONSOLE.length), Buffer.from(getAsset(n))])));
}
