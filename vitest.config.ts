import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts (or finds, via TEMPORAL_ADDRESS) the one Temporal server the run shares; see the file.
    globalSetup: ['test/global-setup.ts'],
    // The Temporal worker's native bridge is happier in child processes than in worker threads.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
});
