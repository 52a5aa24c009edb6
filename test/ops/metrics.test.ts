/**
 * Metrics and logs as an operator scrapes and reads them: the ingress's /metrics (events received,
 * signature rejections, signal latency) and a real `msgflow worker` process's Prometheus endpoint (SDK
 * series plus msgflow's sends, charges and final states), whose JSON log lines leak no token or number.
 */
import { workflowBuildId } from '../../src/temporal/build-id.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { freePort } from '../../src/temporal/dev-server.js';
import { startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { eventually } from './support.js';
import { waitFor } from '../support/wait-for.js';

/** Sum of a metric's samples whose labels include every pair of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => present[k] === v)) total = (total ?? 0) + Number(match[3]);
  }
  return total;
}

describe('ingress metrics', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const scrape = async () => {
    const response = await fetch(`${stack.ingress.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    return response.text();
  };

  it('counts events received and recorded, times the store, and reports the untold backlog', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.failed],
      sender: 'ACME',
      message: 'metrics',
    });
    await started.result();
    // Each final event was recorded (and counted) before the relay could tell the workflow.
    const text = await scrape();
    expect(sample(text, 'msgflow_ingress_events_received_total', { result: 'recorded' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'msgflow_ingress_deliveries_total', { status: '200' })).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'msgflow_ingress_signal_duration_seconds_count', { result: 'accepted' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'msgflow_ingress_signal_duration_seconds_sum', { result: 'accepted' })).toBeGreaterThan(0);
    expect(sample(text, 'msgflow_ingress_request_duration_seconds_count', { status: '200' })).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    // Both outcomes were told (the send completed), so the backlog empties once the relay marked them.
    await waitFor(async () => sample(await scrape(), 'msgflow_relay_untold_outcomes') === 0, 'an empty backlog', {
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(sample(await scrape(), 'msgflow_relay_oldest_untold_seconds')).toBe(0);
    expect(sample(await scrape(), 'msgflow_relay_refused_workflows')).toBe(0);
  });

  it('counts deliveries refused by signature, by reason', async () => {
    const before = sample(await scrape(), 'msgflow_ingress_signature_rejections_total') ?? 0;
    const post = (headers: Record<string, string>) =>
      fetch(stack.ingress.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    expect((await post({})).status).toBe(401);
    const forged = await post({
      'webhook-id': 'msg_x',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    });
    expect(forged.status).toBe(401);
    const forgedCode = ((await forged.json()) as { code: string }).code;

    const text = await scrape();
    expect(sample(text, 'msgflow_ingress_signature_rejections_total')).toBe(before + 2);
    expect(
      sample(text, 'msgflow_ingress_signature_rejections_total', { reason: 'missing_headers' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'msgflow_ingress_signature_rejections_total', { reason: forgedCode })).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(text, 'msgflow_ingress_deliveries_total', { status: '401' })).toBeGreaterThanOrEqual(2);
  });
});

describe('worker metrics and logs (msgflow worker process)', () => {
  const encryptionKey = generateKey();
  let stack: RunningStack;
  let worker: WorkerProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    stack = await startTestStack({ startWorker: false, encryptionKey });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    worker = startWorkerProcess(stack, {
      MSGFLOW_WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_LOG_LEVEL: 'info',
    });
    // Starting takes a while on a busy machine (tsx, then webpack bundles the workflows): wait here, not in the tests.
    await eventually(
      async () => (worker.output().includes('"worker running"') ? true : undefined),
      'the worker process to start',
      180_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${worker.output()}`);
    });
  });
  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
  });

  it('exports the counters of rare events at zero before any, so their dashboard panels have data', async () => {
    const text = await (await fetch(metricsUrl)).text();
    expect(sample(text, 'msgflow_provider_rate_limited_total')).toBe(0);
    expect(sample(text, 'msgflow_otp_guard_decisions_total')).toBe(0);
    expect(sample(text, 'msgflow_otp_channel_attempts_total')).toBe(0);
  });

  it('exports the SDK series with msgflow’s sends, charges and final states', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered],
      sender: 'ACME',
      message: 'Counted, not logged',
    });
    const result = await started.result();

    let last = '';
    const text = await eventually(async () => {
      const body = (last = await (await fetch(metricsUrl)).text());
      const outcomes = sample(body, 'msgflow_message_outcomes_total') ?? 0;
      return outcomes >= 2 && /^temporal_workflow_completed_total/m.test(body) ? body : undefined;
    }, `worker metrics at ${metricsUrl}`).catch((error: Error) => {
      throw new Error(
        `${error.message}\nlast scrape (msgflow and workflow series):\n${last
          .split('\n')
          .filter((l) => /msgflow|workflow_completed/.test(l))
          .join('\n')}`,
      );
    });

    expect(sample(text, 'msgflow_sms_sent_total')).toBe(2);
    expect(
      sample(text, 'msgflow_provider_charged_minor_units_total', {
        activityType: 'sendSms',
        currency: result.currency!,
      }),
    ).toBe(result.cost);
    expect(sample(text, 'msgflow_message_outcomes_total', { status: 'delivered', source: 'webhook' })).toBe(1);
    expect(sample(text, 'msgflow_message_outcomes_total', { status: 'undelivered', source: 'webhook' })).toBe(1);
    expect(sample(text, 'temporal_workflow_completed_total', { workflow_type: 'sendSms' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('2025550100');
  });

  it('logs one JSON object per line, without the token or any number', () => {
    type Entry = { time: string; level: string; component: string; message: string };
    const lines = worker
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    const parse = (line: string): Entry | undefined => {
      try {
        return JSON.parse(line) as Entry;
      } catch {
        return undefined;
      }
    };
    expect(lines.filter((line) => !parse(line)?.time || !parse(line)?.level || !parse(line)?.component)).toEqual([]);
    const entries = lines.map((line) => parse(line)!);
    // Its start line names the worker deployment it joined and its build (the stack's own deployment).
    expect(entries).toContainEqual(
      expect.objectContaining({
        component: 'worker',
        message: 'worker running',
        deployment: stack.taskQueue,
        buildId: workflowBuildId(),
      }),
    );
    const all = worker.output();
    expect(all).not.toContain(stack.token);
    expect(all).not.toContain('2025550100');
    expect(all).not.toContain('Counted, not logged');
  });
});
