import { defineConfig } from 'vitest/config';

/**
 * The suites `npm run test:mutation` runs against each mutant: the fast ones that exercise msgflow's rules in
 * process (unit, store on SQLite, client, sandbox, the payload codec). Left out: suites that need Temporal, and files whose
 * tests run their code in child processes or check the repository rather than the rules (a mutant there
 * is never covered, only slowed down).
 */
export default defineConfig({
  test: {
    include: ['test/{unit,store,client,sandbox}/**/*.test.ts', 'test/ops/codec.test.ts'],
    exclude: [
      'test/unit/{layering,stop-signal,workflow-bundle,docs-links,docs-openapi,install-scripts,optional-packages}.test.ts',
      'test/sandbox/cli.test.ts',
      'test/store/{invariant,postgres-connection-loss}.test.ts',
    ],
    env: { MSGFLOW_STORE_DIALECTS: 'sqlite' },
    testTimeout: 60_000,
  },
});
