import type { Caller } from '../engine/auth/caller.js';
import type { Engine } from '../engine/index.js';
import type { Service } from './service.js';

const PROGRESS_INTERVAL_MS = 250;

/** The engine in this process, acting as the data dir's admin. */
export function localService(engine: Engine, caller: Caller): Service {
  return {
    mode: 'local',
    me: async () => engine.directory.me(caller),
    createDataset: (req) => engine.datasets.create(caller, req),
    listDatasets: async () => engine.datasets.list(caller),
    getDataset: async (id) => engine.datasets.get(caller, id),
    deleteDataset: (id) => engine.datasets.delete(caller, id),
    ingest: (input, target) => engine.ingest.submit(caller, input, target),
    getRun: async (id) => engine.ingest.get(caller, id),
    listRuns: async (query) => engine.ingest.list(caller, query),
    waitRun: async (id, onProgress) => {
      const timer = onProgress && setInterval(() => onProgress(engine.ingest.get(caller, id)), PROGRESS_INTERVAL_MS);
      try {
        return await engine.ingest.wait(caller, id);
      } finally {
        clearInterval(timer);
      }
    },
    search: async (req) => engine.search.search(caller, req),
    fields: async (query) => engine.fields.list(caller, query),
    close: () => engine.close(),
  };
}
