import { defineConfig } from 'vitest/config';

/**
 * `npm run test:tracing`: traces read back from a real Jaeger, which scripts/ensure-jaeger.sh builds with Go into
 * the msgflow cache on first use (several minutes). Files end in `.tracing.ts`, so `npm test` never picks them up
 * and needs no Go; they share the Temporal dev server of test/global-setup.ts.
 */
export default defineConfig({
  test: {
    include: ['test/tracing/**/*.tracing.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 1_200_000,
  },
});
