import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // most of the suite waits on child processes (svc commands, svc serve): two files at once keep both cores busy
    maxWorkers: 2,
  },
});
