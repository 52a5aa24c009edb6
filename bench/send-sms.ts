/**
 * A single transactional `sendSms` through the facade, one at a time: how long until the provider has
 * accepted it (the send activity's completion in the workflow's history) beside a bare `sms.send` from the
 * client, and how long until the caller holds its final status (`result()`) beside the moment the provider
 * recorded that status. The worker runs in its own process; the carrier is instant, so the final-status
 * figures are msgflow's and the webhook path's overhead, not a carrier's delay.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import proto from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { MAGIC_NUMBERS } from '../src/sandbox/index.js';
import { BENCH_SANDBOX } from './campaign-target.js';
import { type Benchmark, type BenchRow, eventTimeMs, percentile, round } from './harness.js';
import { startOtpBenchStack } from './otp-worker.js';

const WARMUP = 5;
const ITERATIONS = Number(process.env.MSGFLOW_BENCH_SEND_SMS_ITERATIONS ?? 100);

export const sendSmsBenchmark: Benchmark = {
  name: 'send-sms',
  async run(context) {
    const bench = await startOtpBenchStack(context, {
      taskQueue: `bench-send-sms-${randomUUID()}`,
      sandbox: { ...BENCH_SANDBOX, log: () => {} },
      ratePerMinute: 1_000_000,
      initialBalance: 1_000_000_000,
    });
    const { stack } = bench;
    const facade = { accepted: [] as number[], final: [] as number[], providerFinal: [] as number[] };
    const bare: number[] = [];
    const message = { recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: 'Your order has shipped' };
    try {
      for (let i = 0; i < WARMUP + ITERATIONS; i++) {
        const keep = i >= WARMUP;
        const t0 = performance.now();
        const calledAt = performance.timeOrigin + t0;
        const started = await stack.msgflow.sendSms(message);
        const result = await started.result();
        const final = performance.now() - t0;
        const accepted = (await sendCompletedAt(stack.temporal, started.workflowId)) - calledAt;
        const providerFinal = Date.parse(result.messages[0]!.timestamp!) - calledAt;
        if (result.messages[0]!.status !== 'delivered') throw new Error(`ended ${result.messages[0]!.status}`);

        const t1 = performance.now();
        await stack.messaging.sms.send(message, { idempotencyKey: randomUUID() });
        const bareSend = performance.now() - t1;
        if (keep) {
          facade.accepted.push(accepted);
          facade.final.push(final);
          facade.providerFinal.push(providerFinal);
          bare.push(bareSend);
        }
        if ((i + 1) % 25 === 0) context.log(`${i + 1}/${WARMUP + ITERATIONS}`);
      }
    } finally {
      await bench.close();
    }
    const row = (name: string, values: number[]): BenchRow => ({
      case: name,
      p50: round(percentile(values, 50)),
      p99: round(percentile(values, 99)),
    });
    return {
      title: `Single sendSms, ms from the call (${ITERATIONS} sends after ${WARMUP} warm-up, one at a time)`,
      rows: [
        row('facade: provider accepted (send activity completed)', facade.accepted),
        row('ceiling: client sms.send answered', bare),
        row('facade: final status in the caller’s hands (result())', facade.final),
        row('provider: final status recorded (its timestamp)', facade.providerFinal),
      ],
      notes: [
        'accepted and provider times read from the history and the sandbox (same machine clock, ms resolution for the sandbox)',
        'sandbox in this process with an instant carrier and its webhooks to msgflow’s ingress (also in this process); `msgflow worker` in its own process',
      ],
    };
  },
};

/** When the workflow's `sendSms` activity completed, as the server recorded it (epoch ms). */
async function sendCompletedAt(client: Client, workflowId: string): Promise<number> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const completed = events.find(
    (e) => e.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
  );
  if (!completed?.eventTime) throw new Error('no completed send activity in the history');
  return eventTimeMs(completed);
}
