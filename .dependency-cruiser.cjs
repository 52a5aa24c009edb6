/**
 * msgflow's layers, enforced by `npm run lint:deps` (and by test/unit/layering.test.ts). Arrows point down only:
 *
 *   entry points    src/entry (the package's public modules: re-exports only)
 *   bootstraps      src/cli, src/worker.ts, src/stack.ts
 *   services        src/starter, src/ingress, src/sandbox, src/codec-server  (independent of each other)
 *   durable logic   activities, workflows
 *   infrastructure  src/client, src/crypto, src/http, src/log.ts, src/redaction.ts, src/sleep.ts, src/config.ts,
 *                   src/optional-packages.ts, src/otp-guard-file.ts, src/store, src/temporal, src/metrics, src/tracing,
 *                   src/audience (reading and checking audiences: the campaign's activities and the starter's imports)
 *   contract        src/api (schemas, constants, pure rules), src/definitions (ids, queues, signals, search attributes)
 *
 * Every rule also covers type-only imports, except where a rule says otherwise: workflows may name activity and
 * schema types (erased when compiled), never import their code. Tests, benchmarks and scripts are not cruised.
 * msgflow's optional peers (@temporalio/worker, @temporalio/testing, better-sqlite3, pg) are dev dependencies of
 * the checkout; production code names their types or loads them with `import()` (src/optional-packages.ts).
 */

const ENTRY_POINTS = ['^src/entry/'];
const BOOTSTRAPS = ['^src/cli/', '^src/worker\\.ts$', '^src/stack\\.ts$'];
const SERVICES = ['^src/starter/', '^src/ingress/', '^src/sandbox/', '^src/codec-server/'];
const DURABLE = ['^activities/', '^workflows/'];
const INFRASTRUCTURE = [
  '^src/client/',
  '^src/crypto/',
  '^src/http/',
  '^src/log\\.ts$',
  '^src/redaction\\.ts$',
  '^src/sleep\\.ts$',
  '^src/audience/',
  '^src/config\\.ts$',
  '^src/optional-packages\\.ts$',
  '^src/otp-guard-file\\.ts$',
  '^src/store/',
  '^src/temporal/',
  '^src/metrics/',
  '^src/tracing/',
];
/** Modules whose code runs inside the workflow sandbox: deterministic, no zod, no Node modules. */
const WORKFLOW_SAFE = [
  '^workflows/',
  '^src/definitions/',
  '^src/api/constants\\.ts$',
  '^src/api/segments\\.ts$',
  '^src/api/message-template\\.ts$',
  '^src/api/input-rules\\.ts$',
  '^node_modules/@temporalio/(workflow|common)/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of imports has no bottom: split out what both sides need (usually into a leaf module).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'api-is-a-leaf',
      severity: 'error',
      comment: 'src/api is the contract: it imports nothing of msgflow outside itself.',
      from: { path: '^src/api/' },
      to: { path: '^(src|activities|workflows)/', pathNot: '^src/api/' },
    },
    {
      name: 'definitions-are-a-leaf',
      severity: 'error',
      comment: 'src/definitions may use only src/api besides itself: everything else imports it.',
      from: { path: '^src/definitions/' },
      to: { path: '^(src|activities|workflows)/', pathNot: ['^src/definitions/', '^src/api/'] },
    },
    {
      name: 'definitions-stay-workflow-safe',
      severity: 'error',
      comment:
        'Workflows import src/definitions, so its code may use only the workflow-safe modules ' +
        '(src/api/constants.ts rather than the zod schemas; types from anywhere in src/api).',
      from: { path: '^src/definitions/' },
      to: { pathNot: WORKFLOW_SAFE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-import-only-workflow-safe-code',
      severity: 'error',
      comment:
        'Workflow code is bundled and replayed: it may import workflows/, src/definitions, src/api/constants.ts, ' +
        'src/api/segments.ts, src/api/message-template.ts, src/api/input-rules.ts and the workflow SDK. Types (activities, schemas) are fine: they are erased.',
      from: { path: '^workflows/' },
      to: { pathNot: WORKFLOW_SAFE, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'infrastructure-stays-low',
      severity: 'error',
      comment: 'Infrastructure (client, crypto, http, log, config, store, temporal, metrics) serves the layers above.',
      from: { path: INFRASTRUCTURE },
      to: { path: [...DURABLE, ...SERVICES, ...BOOTSTRAPS] },
    },
    {
      name: 'activities-do-not-import-workflows',
      severity: 'error',
      comment: 'Activities and workflows share definitions through src/definitions, not through each other.',
      from: { path: '^activities/' },
      to: { path: '^workflows/' },
    },
    {
      name: 'durable-logic-below-services',
      severity: 'error',
      comment: 'Activities and workflows are wired up by the worker; they do not reach into services or bootstraps.',
      from: { path: DURABLE },
      to: { path: [...SERVICES, ...BOOTSTRAPS] },
    },
    {
      name: 'services-do-not-import-activities',
      severity: 'error',
      comment:
        'The starter and the ingress run without a worker: what they share with the activities (audience readers, ' +
        'outcome mapping, OTP keys) lives below both (src/audience, src/store, src/crypto), not in activities/.',
      from: { path: '^src/(starter|ingress)/' },
      to: { path: '^activities/' },
    },
    {
      name: 'services-are-independent',
      severity: 'error',
      comment: 'Starter, ingress, sandbox and codec server do not import each other: a bootstrap combines them.',
      from: { path: '^src/(starter|ingress|sandbox|codec-server)/' },
      to: { path: '^src/(starter|ingress|sandbox|codec-server)/', pathNot: '^src/$1/' },
    },
    {
      name: 'sandbox-emulates-the-provider-only',
      severity: 'error',
      comment: "The sandbox is the provider's emulator: it knows the contract (src/api) and generic plumbing only.",
      from: { path: '^src/sandbox/' },
      to: {
        path: '^(src|activities|workflows)/',
        pathNot: ['^src/(sandbox|api|http|store|crypto)/', '^src/(log|redaction|sleep|config|optional-packages)\\.ts$'],
      },
    },
    {
      name: 'nothing-imports-bootstraps',
      severity: 'error',
      comment: 'Bootstraps (CLI, worker, dev stack) are the top: only other bootstraps and entry points import them.',
      from: { pathNot: [...BOOTSTRAPS, ...ENTRY_POINTS] },
      to: { path: BOOTSTRAPS },
    },
    {
      name: 'nothing-imports-entry-points',
      severity: 'error',
      comment: "Entry points are the package's public face: msgflow's own code imports the real modules.",
      from: { pathNot: ENTRY_POINTS },
      to: { path: ENTRY_POINTS },
    },
    {
      name: 'production-code-not-from-tests',
      severity: 'error',
      from: { path: '^(src|activities|workflows)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing (a typo, or a module that moved).',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-undeclared-packages',
      severity: 'error',
      comment: 'Every package imported must be a dependency (or an optional peer) in package.json.',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'], dependencyTypesNot: ['npm-peer'] },
    },
    {
      name: 'no-dev-dependencies-in-production-code',
      severity: 'error',
      comment:
        'Runtime code may not need a devDependency (type-only imports are erased, so they may; optional peers ' +
        'are dev dependencies of the checkout, see the next rule).',
      from: { path: '^(src|activities|workflows)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only', 'npm-peer'] },
    },
    {
      name: 'optional-peers-load-lazily',
      severity: 'error',
      comment:
        'An optional peer may be missing: load it on first use with import() through importOptional ' +
        '(src/optional-packages.ts), so the error names the package; import only its types statically.',
      from: { path: '^(src|activities|workflows)/' },
      to: { dependencyTypes: ['npm-peer'], dependencyTypesNot: ['type-only', 'dynamic-import'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too: a circle of types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
