/**
 * A test's server (Jaeger, Prometheus) that cannot start fails at once, naming the binary, what happened and the
 * likely fix, instead of after the readiness wait. Stand-in programs play the server.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTool } from '../support/tool-process.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'msgflow-tool-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `binary` as a server that would be ready at a port nothing listens on. */
async function start(binary: string): Promise<Error> {
  const toolDir = await mkdtemp(join(dir, 'run-'));
  const started = startTool({ binary, args: [], dir: toolDir, readyUrl: 'http://127.0.0.1:1/', what: 'Tool ready' });
  return started.then(
    () => new Error('started'),
    (error: unknown) => error as Error,
  );
}

describe('startTool', () => {
  it('fails at once when the binary cannot be started', async () => {
    const binary = join(dir, 'no-such-tool');
    const { message } = await start(binary);
    expect(message).toContain(`${binary} could not be started (spawn ${binary} ENOENT) before Tool ready`);
    expect(message).toContain(`Likely fix: make sure ${binary} exists and this user may run it`);
  });

  it('fails at once when the server ends before it is ready, with its output', async () => {
    const binary = join(dir, 'failing-tool');
    await writeFile(binary, '#!/bin/sh\necho "error: bad config" >&2\nexit 2\n');
    await chmod(binary, 0o755);
    const { message } = await start(binary);
    expect(message).toContain(`${binary} exited with code 2 before Tool ready`);
    expect(message).toContain('error: bad config');
  });
});
