// ESLint for the TypeScript sources: the recommended rules of ESLint and typescript-eslint; formatting is
// Prettier's job (eslint-config-prettier switches off every rule that would argue with it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.build/', 'node_modules/', '.data/', 'test/replay/histories/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_`-prefixed names are deliberately unused (e.g. destructuring a field away).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A class or schema named only as a type is imported as a type: with verbatimModuleSyntax, anything else
      // keeps the module (and what it pulls in, e.g. zod) in the workflow bundle.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
    },
  },
  // Size: limits the code meets, so its shape holds. Workflows read as a story (samples-typescript style):
  // short functions over pure state changes. Command registrations, console pages and the admin routes are
  // tables (one option or route per entry), long by nature and flat, so length does not apply to them.
  {
    files: ['**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 100, skipBlankLines: true, skipComments: true }],
      'max-params': ['error', 5],
      complexity: ['error', 21],
      'max-depth': ['error', 4],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      complexity: ['error', 16],
    },
  },
  // The store's parts are factories over one driver: the returned methods are short, the factory holds them all.
  {
    files: ['src/store/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 140, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['src/cli/**/*.ts', 'src/sandbox/console/pages/**/*.ts', 'src/sandbox/admin/routes.ts'],
    rules: { 'max-lines-per-function': 'off' },
  },
  // Tests, benchmarks and scripts are read top to bottom: a describe block or a scenario is as long as its story.
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.{ts,mjs}'],
    rules: { 'max-lines-per-function': 'off', 'max-params': 'off', complexity: 'off', 'max-depth': 'off' },
  },
  prettier,
);
