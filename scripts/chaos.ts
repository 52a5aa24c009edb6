/**
 * `npm run chaos -- --seed N --minutes M [--recipients R]`: one seeded fault run over the production
 * topology (test/reliability/support/chaos). Prints its seed, the schedule, the faults as they happened and a
 * summary; exits 1 on any violation, 2 on bad arguments. Without --seed it picks one (printed: replay it).
 */
import { parseArgs } from 'node:util';
import { describeReport, runChaos } from '../test/reliability/support/chaos/run.js';
import { printSummary } from '../test/reliability/support/summary.js';

function usage(message: string): never {
  process.stderr.write(`${message}\nUsage: npm run chaos -- [--seed N] [--minutes M] [--recipients R]\n`);
  process.exit(2);
}

function positive(name: string, value: string | undefined, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    usage(`--${name} must be a positive ${integer ? 'whole number' : 'number'}, got "${value}"`);
  return n;
}

let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: { seed: { type: 'string' }, minutes: { type: 'string' }, recipients: { type: 'string' } },
    strict: true,
  }));
} catch (error) {
  usage((error as Error).message);
}
const seed = positive('seed', values.seed, Math.floor(Math.random() * 2 ** 31) + 1, true);
const minutes = positive('minutes', values.minutes, 3, false);
const campaignRecipients = positive('recipients', values.recipients, 300, true);

const log = (line: string) => process.stdout.write(`[chaos] ${line}\n`);
log(`seed ${seed} (replay: npm run chaos -- --seed ${seed} --minutes ${minutes} --recipients ${campaignRecipients})`);
const report = await runChaos({ seed, minutes, campaignRecipients, log });
for (const line of describeReport(report)) log(line);
printSummary('chaos', report.summary, `seed ${seed}`);
process.exit(report.check.violations.length > 0 ? 1 : 0);
