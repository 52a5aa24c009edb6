/** A command's traces sent to a collector that is down cost the traces only: flushTraces says so and resolves. */
import { createServer } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flushTraces } from '../../src/cli/flush-traces.js';
import { startTracing } from '../../src/tracing/setup.js';

async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('flushTraces', () => {
  afterEach(() => vi.restoreAllMocks());

  it('resolves when the collector cannot be reached, naming it on stderr', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const tracing = startTracing('msgflow-cli', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } as never);
    expect(tracing).toBeDefined();
    trace.getTracer('test').startSpan('a command').end();
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);

    await expect(flushTraces(tracing)).resolves.toBeUndefined();

    expect(printed).toHaveBeenCalledTimes(1);
    expect(String(printed.mock.calls[0]![0])).toMatch(
      new RegExp(`^msgflow: traces not exported to ${endpoint}/v1/traces \\(.*ECONNREFUSED`),
    );
  });

  it('does nothing without tracing', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await flushTraces(undefined);
    expect(printed).not.toHaveBeenCalled();
  });
});
