/**
 * `npm run test:mutation`: StrykerJS mutates the modules where msgflow's rules live and runs the fast suites
 * (vitest.mutation.config.ts) against each mutant; a mutant no test kills is a rule no test guards.
 * Survivors that change no behaviour are listed, with why, in docs/reliability.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  mutate: [
    // The workflows' pure state: campaign, OTP session, first outcome per message, the FIFO lock.
    'workflows/campaign-state.ts',
    'workflows/otp-state.ts',
    'workflows/first-outcomes.ts',
    'workflows/fifo-lock.ts',
    // Webhook signatures and their verification.
    'src/api/signature.ts',
    'src/ingress/verifier.ts',
    // The request budget: the store's bucket and the worker's classes.
    'src/store/request-bucket.ts',
    'src/temporal/request-classes.ts',
    // The client: retry policy, response parsing, error mapping; redaction of logs and the client's logging hook.
    'src/client/retry-policy.ts',
    'src/client/response.ts',
    'src/client/error-response.ts',
    'src/api/json.ts',
    'src/redaction.ts',
    // The sandbox: idempotency, cursors, rate limits.
    'src/sandbox/idempotency.ts',
    'src/sandbox/cursor.ts',
    'src/sandbox/http/rate-limit.ts',
    // The message store's SQL layer (run on SQLite): its shared helpers and its parts.
    'src/store/sql.ts',
    'src/store/waiters.ts',
    'src/store/reports.ts',
    'src/store/suppressions.ts',
    'src/store/retention.ts',
    // The payload codec and log redaction.
    'src/temporal/codec.ts',
    'src/log.ts',
  ],
  coverageAnalysis: 'perTest',
  // The full run takes about 40 minutes on 2 cores: the results are kept in this committed file, and a run
  // tests again only the mutants whose code changed since (CI included); `test:mutation:survivors` tests the
  // survivors again after new tests.
  incremental: true,
  incrementalFile: 'test/mutation/incremental.json',
  concurrency: 2,
  thresholds: { high: 95, low: 90, break: 94 },
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
