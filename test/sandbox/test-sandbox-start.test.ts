/** A test sandbox that cannot listen fails with one message naming the address, the reason and the fix. */
import { describe, expect, it } from 'vitest';
import { startTestSandbox } from '../support/sandbox.js';

describe('startTestSandbox', () => {
  it('names a port in use and what to do', async () => {
    const first = await startTestSandbox();
    const port = Number(new URL(first.sandbox.url).port);
    try {
      await expect(startTestSandbox({ port })).rejects.toThrow(
        `The test sandbox could not listen on 127.0.0.1:${port} (EADDRINUSE). Likely fix: the port is in use: ` +
          'stop what holds it, or let the test take a free port (port 0).',
      );
    } finally {
      await first.close();
    }
  });
});
