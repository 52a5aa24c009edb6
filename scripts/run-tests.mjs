// `npm test`: the static checks, then every vitest suite that needs Node alone (test/**/*.test.ts), stopping at the
// first step that fails, and a last line saying how long it all took. Arguments go to vitest
// (`npm test -- test/unit` runs one folder after the checks).
import { spawnSync } from 'node:child_process';

const steps = [
  ['ESLint', 'eslint', '.'],
  ['layering rules', 'depcruise', '--config', '.dependency-cruiser.cjs', 'src', 'activities', 'workflows'],
  ['Prettier', 'prettier', '--check', '.'],
  ['type-check', 'tsc', '--noEmit'],
  ['vitest', 'vitest', 'run', ...process.argv.slice(2)],
];

const started = Date.now();
const took = () => {
  const seconds = Math.round((Date.now() - started) / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
};

for (const [name, command, ...args] of steps) {
  // The local binaries, as npm scripts find them (npm puts node_modules/.bin first on PATH).
  const { status, error } = spawnSync(command, args, { stdio: 'inherit' });
  if (error || status !== 0) {
    console.error(`npm test: ${name} failed${error ? ` (${error.message})` : ''}; stopped after ${took()}`);
    process.exit(status || 1);
  }
}
console.log(`npm test: passed in ${took()}`);
