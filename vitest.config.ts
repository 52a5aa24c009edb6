import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts (or finds, via TEMPORAL_ADDRESS) the one Temporal server the run shares; see the file.
    globalSetup: ['test/global-setup.ts'],
    // The Temporal worker's native bridge is happier in child processes than in worker threads.
    pool: 'forks',
    // Most files wait on Temporal timers, webhooks and child processes rather than the CPU: three at a time keep
    // two cores busy (vitest's default, one fewer than the cores, runs one file at a time here).
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
});
