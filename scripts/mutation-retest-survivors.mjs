// Drops the surviving (and uncovered) mutants from the incremental results, so the next `npm run test:mutation`
// tests them again against today's tests. Stryker's incremental mode re-runs a mutant when its code or the
// tests that covered it change, but not when a new test would now cover it.
import { readFileSync, writeFileSync } from 'node:fs';

const FILE = 'test/mutation/incremental.json';
const report = JSON.parse(readFileSync(FILE, 'utf8'));
let dropped = 0;
for (const file of Object.values(report.files)) {
  const kept = file.mutants.filter((m) => m.status !== 'Survived' && m.status !== 'NoCoverage');
  dropped += file.mutants.length - kept.length;
  file.mutants = kept;
}
writeFileSync(FILE, JSON.stringify(report));
console.log(`${dropped} surviving or uncovered mutants will be tested again`);
