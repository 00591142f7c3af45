import { isSea } from 'node:sea';
import { setTextWorkerFile } from '../../engine/text/workerFile.js';
import { setDefaultEmbeddingsFile } from '../../engine/vector/embedders/wordVectors.js';
import { assetFile } from './assets.js';

/** In the single executable, the text worker and the builtin embedder's vectors are its own copies, unpacked on first use. */
if (isSea()) {
  setTextWorkerFile(() => assetFile('text-worker.cjs'));
  setDefaultEmbeddingsFile(() => assetFile('wink-sg-100d.bin'));
}
