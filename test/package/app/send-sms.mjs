// The packaged stack on the given Temporal server: one SMS to the sandbox's "delivered" number, started with
// the `msgflow` facade; prints where the worker bundled its workflows from and the final statuses.
import { Msgflow } from 'msgflow';
import { MAGIC_NUMBERS, startStack } from 'msgflow/testing';
import { WORKFLOWS_PATH } from 'msgflow/worker';

const [address, namespace] = process.argv.slice(2);
const stack = await startStack({
  temporal: { address, namespace },
  taskQueue: `package-${process.pid}-${Date.now()}`,
  ratePerMinute: 60_000,
  sandbox: {
    port: 0,
    db: ':memory:',
    log: () => {},
    tickMs: 10,
    sendLatencyMs: 5,
    carrier: { submitMs: 20, finalMs: 30, voiceStepMs: 20 },
  },
});
try {
  const msgflow = new Msgflow(stack.temporal, stack.taskQueue);
  const started = await msgflow.sendSms({
    sender: 'ACME',
    recipients: [MAGIC_NUMBERS.delivered],
    message: 'Hello from the package',
  });
  const result = await started.result();
  console.log(JSON.stringify({ workflowsPath: WORKFLOWS_PATH, statuses: result.messages.map((m) => m.status) }));
} finally {
  await stack.close();
}
