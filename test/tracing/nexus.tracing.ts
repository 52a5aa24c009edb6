/**
 * A Nexus call in one trace, read back from a real Jaeger: a caller workflow (traced with Temporal's
 * OpenTelemetry interceptors, in a namespace of its own) sends an SMS through msgflow's endpoint; its span for
 * the operation, the Nexus worker's span for the handler, and msgflow's run of the send are one trace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { activeTracing, startTracingFromEnv, type Tracing } from '../../src/tracing/setup.js';
import { bundleMsgflowWorkflows } from '../../src/worker.js';
import { type JaegerSpan, startJaeger, type TestJaeger } from '../support/jaeger.js';
import { type NexusCaller, startNexusCaller } from '../support/nexus-caller/index.js';
import { startTestStack } from '../support/stack.js';
import { waitFor } from '../support/wait-for.js';

const SERVICE = 'msgflow-nexus-tracing-test';

describe('a Nexus call in one trace', () => {
  let jaeger: TestJaeger;
  let tracing: Tracing;
  let stack: RunningStack;
  let caller: NexusCaller;

  beforeAll(async () => {
    jaeger = await startJaeger();
    tracing = startTracingFromEnv(SERVICE, { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint })!;
    stack = await startTestStack({
      nexus: true,
      encryptionKey: generateKey(),
      workflowBundle: await bundleMsgflowWorkflows({ traced: true, versioned: true }),
    });
    caller = await startNexusCaller(
      { namespace: stack.temporal.options.namespace, taskQueue: stack.taskQueue },
      { traced: true },
    );
  }, 1_200_000);
  afterAll(async () => {
    await caller?.close();
    await stack?.close();
    await activeTracing()?.shutdown();
    await jaeger?.stop();
  });

  it('holds the caller, the operation and the send in msgflow, each the child of the one before', async () => {
    const { workflowId, result } = await caller.call('sendSms', {
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'ACME',
      message: 'Traced through Nexus',
    });
    expect(result.messages[0]?.status).toBe('delivered');

    const chain = [
      'StartNexusOperation:msgflow/sendSms',
      'RunStartNexusOperation:msgflow/sendSms',
      'StartWorkflow:sendSms',
      'RunWorkflow:sendSms',
    ];
    const trace = await waitFor(
      async () => {
        await tracing.spanProcessor.forceFlush();
        const [found] = await jaeger.findTraces(SERVICE, { temporalWorkflowId: workflowId });
        const names = new Set(found?.spans.map((s) => s.operationName));
        return found && chain.every((name) => names.has(name)) && found;
      },
      `the trace of ${workflowId} with msgflow's send, in Jaeger`,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const byName = (name: string) => trace.spans.find((s) => s.operationName === name)!;
    const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
    for (let i = 1; i < chain.length; i++)
      expect(parentOf(byName(chain[i]!)), `${chain[i]} under ${chain[i - 1]}`).toBe(byName(chain[i - 1]!).spanID);
  });
});
