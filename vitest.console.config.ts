import { defineConfig } from 'vitest/config';

/**
 * `npm run test:console`: the web console in a real headless Chromium (Debian's, at /usr/bin/chromium,
 * installed by scripts/ensure-debian-package.sh when missing). Files end in `.console.ts`, so `npm test` never
 * picks them up; they share the Temporal dev server of test/global-setup.ts (the OTP case needs a worker).
 */
export default defineConfig({
  test: {
    include: ['test/console/**/*.console.ts'],
    globalSetup: ['test/console/chromium-setup.ts', 'test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 600_000,
  },
});
