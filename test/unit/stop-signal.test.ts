/** A command stops in order even when the stop signal comes twice (npm run passes Ctrl-C on again). */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SIGNALS = pathToFileURL(fileURLToPath(new URL('../../src/cli/signals.ts', import.meta.url))).href;

it('finishes its shutdown when a second SIGINT arrives during it', async () => {
  const script = `
    const { untilStopSignal } = await import(${JSON.stringify(SIGNALS)});
    const running = setInterval(() => {}, 1000); // a command's servers keep it alive
    const stopSignal = untilStopSignal(); // listening before the test is told to signal
    console.log('waiting');
    await stopSignal;
    console.log('stopping');
    await new Promise((r) => setTimeout(r, 500));
    console.log('stopped');
    clearInterval(running);`;
  const child = spawn(process.execPath, ['--import', TSX, '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    if (text.includes('waiting') || text.includes('stopping')) child.kill('SIGINT');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  expect(output).toContain('stopped');
  expect(code).toBe(0);
}, 30_000);
