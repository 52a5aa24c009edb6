import { defineConfig } from 'vitest/config';

/**
 * `npm run test:reliability`: fault injection, property-based and security suites. Their files end in
 * `.reliability.ts` so the default `npm test` (test/**\/*.test.ts) never picks them up; they share its
 * Temporal dev server (global setup) and run one file at a time, since each one loads the machine on its own.
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.reliability.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Each suite prints a one-line summary of its counts; show it in the report.
    silent: false,
  },
});
