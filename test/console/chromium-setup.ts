/** Global setup of the console suite: Debian's chromium must be at /usr/bin/chromium (installed here if missing). */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export default function setup(): void {
  if (existsSync(CHROMIUM)) return;
  execFileSync('bash', ['scripts/ensure-debian-package.sh', 'chromium', CHROMIUM], { stdio: 'inherit' });
}
