/**
 * Traces end to end, read back from a real Jaeger: the stack (starter, worker, workflows, ingress) exports its
 * spans over OTLP/HTTP as a deployment configured with OTEL_EXPORTER_OTLP_ENDPOINT does. One send is one trace
 * from the starter's call through the workflow and its activity to the provider request; the ingress's span
 * for the message's status event is linked to that trace. No span carries the number, the text or a code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningStack } from '../../src/stack.js';
import { activeTracing, startTracingFromEnv, type Tracing } from '../../src/tracing/setup.js';
import { bundleMsgflowWorkflows } from '../../src/worker.js';
import { type JaegerSpan, type JaegerTrace, startJaeger, tagOf, type TestJaeger } from '../support/jaeger.js';
import { startTestStack } from '../support/stack.js';
import { CHROMIUM } from '../console/chromium-setup.js';
import { waitFor } from '../support/wait-for.js';

const SERVICE = 'msgflow-tracing-test';

describe('traces from a send to its status event', () => {
  let jaeger: TestJaeger;
  let tracing: Tracing;
  let stack: RunningStack;

  beforeAll(async () => {
    jaeger = await startJaeger({ uiAssets: process.env.MSGFLOW_JAEGER_UI_ASSETS });
    tracing = startTracingFromEnv(SERVICE, { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint })!;
    stack = await startTestStack({
      workflowBundle: await bundleMsgflowWorkflows({ traced: true, versioned: true }),
      sandbox: { otpPerIpPerMinute: 10_000 },
    });
  }, 1_200_000);
  afterAll(async () => {
    await stack?.close();
    await activeTracing()?.shutdown();
    await jaeger?.stop();
  });

  /** Flushes this process's spans and asks Jaeger with `find` until it answers. */
  function exported<T>(find: () => Promise<T | undefined | false>, what: string): Promise<T> {
    return waitFor(
      async () => {
        await tracing.spanProcessor.forceFlush();
        return find();
      },
      `${what}, in Jaeger`,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  }

  const holds = (trace: JaegerTrace | undefined, spanName: string) =>
    trace?.spans.some((s) => s.operationName === spanName) ?? false;

  /**
   * The relay's signal to `workflowId` and the trace it links to, once that trace holds `request` (the
   * workflow's spans reach the exporter as its tasks complete).
   */
  function signalAndSend(workflowId: string, request: string): Promise<{ signal: JaegerSpan; send: JaegerTrace }> {
    return exported(async () => {
      const [relay] = await jaeger.findTraces(SERVICE, { 'temporal.workflow_id': workflowId });
      const signal = relay?.spans.find((s) => s.operationName === 'msgflow.relay.signal');
      const link = signal?.references.find((r) => r.traceID !== signal.traceID);
      const send = link && (await jaeger.trace(link.traceID));
      return signal && holds(send, request) && { signal, send: send! };
    }, `the relay's signal to ${workflowId} and the send it links to, with ${request}`);
  }

  /** Whether any name, tag or log value of the trace holds `digitsOrText` (digits: as a whole number). */
  function mentions(trace: JaegerTrace, digitsOrText: string): boolean {
    const values = [
      ...trace.spans.flatMap((s) => [s.operationName, ...s.tags.map((t) => t.value)]),
      ...trace.spans.flatMap((s) => s.logs.flatMap((l) => l.fields.map((f) => f.value))),
      ...Object.values(trace.processes).flatMap((p) => p.tags.map((t) => t.value)),
    ].map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    const pattern = new RegExp(`(^|\\D)${digitsOrText}(\\D|$)`);
    return values.some((v) => pattern.test(v));
  }

  it('puts a single send in one trace, from the starter to the provider request, linked from its status event', async () => {
    const recipient = '2348031110001';
    const message = 'Your parcel 4711 is on its way';
    const started = await stack.msgflow.sendSms({ recipients: [recipient], sender: 'ACME', message });
    const result = await started.result();
    const [sent] = result.messages;
    expect(sent?.status).toBe('delivered');

    const { signal, send } = await signalAndSend(started.workflowId, 'POST /sms/send');
    const byName = (name: string) => send.spans.find((s) => s.operationName === name);
    const chain = ['StartWorkflow:sendSms', 'RunWorkflow:sendSms', 'StartActivity:sendSms', 'RunActivity:sendSms'];
    for (const name of [...chain, 'POST /sms/send']) expect(byName(name), `${name} in the send's trace`).toBeDefined();
    // Each a child of the one before: the starter's call is the root, the provider request the activity's child.
    const parentOf = (span: JaegerSpan) => span.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
    expect(parentOf(byName('StartWorkflow:sendSms')!)).toBeUndefined();
    const story = [...chain, 'POST /sms/send'];
    for (let i = 1; i < story.length; i++)
      expect(parentOf(byName(story[i]!)!), `${story[i]} under ${story[i - 1]}`).toBe(byName(story[i - 1]!)!.spanID);
    expect(tagOf(byName('POST /sms/send')!, 'http.response.status_code')).toBe(202);

    // The status event's span names the message and links to the activity that sent it.
    expect(tagOf(signal, 'msgflow.provider_message_id')).toBe(sent!.provider_message_id);
    const link = signal.references.find((r) => r.traceID === send.traceID);
    expect(link?.spanID).toBe(byName('RunActivity:sendSms')!.spanID);
    // The send's trace is found by the message's id too.
    expect(tagOf(byName('RunActivity:sendSms')!, 'msgflow.provider_message_id')).toBe(sent!.provider_message_id);
    // The delivery's own trace: the request and its store write (the relay tells the workflow afterwards).
    const ingress = await exported(async () => {
      const traces = await jaeger.findTraces(SERVICE, { 'msgflow.provider_message_id': sent!.provider_message_id });
      return traces.find((t) => holds(t, 'POST /webhooks/messaging'));
    }, 'the delivery of the status event');
    expect(ingress.spans.map((s) => s.operationName)).toEqual(
      expect.arrayContaining(['POST /webhooks/messaging', 'msgflow.ingress.record']),
    );
    const relay = (await jaeger.trace(signal.traceID))!;

    for (const trace of [send, ingress, relay]) {
      expect(mentions(trace, recipient)).toBe(false);
      expect(mentions(trace, message)).toBe(false);
    }
    if (process.env.MSGFLOW_TRACE_SCREENSHOT) await screenshotTrace(send.traceID, process.env.MSGFLOW_TRACE_SCREENSHOT);
  });

  /**
   * The docs' picture of a trace (docs/tracing): with MSGFLOW_JAEGER_UI_ASSETS naming built Jaeger UI assets and
   * MSGFLOW_TRACE_SCREENSHOT the PNG to write, the trace's page in Jaeger's UI, in headless Chromium.
   */
  async function screenshotTrace(traceId: string, path: string): Promise<void> {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 640 } });
      await page.goto(`${jaeger.uiUrl}/trace/${traceId}`);
      await page.getByText('POST /sms/send').first().waitFor();
      await page.screenshot({ path });
    } finally {
      await browser.close();
    }
  }

  it('puts an OTP session in one trace with its provider request, linked from its status event, without the code', async () => {
    const recipient = '2348031110002';
    const answer = await stack.msgflow.sendOtp({ purpose: 'login', recipient });
    expect(answer.status).toBe('sent');
    const [newest] = await waitFor(async () => {
      const inbox = await stack.admin.inbox(recipient);
      return inbox.length ? inbox : undefined;
    }, 'the code in the sandbox inbox');
    const code = newest!.text.match(/\b(\d{4,10})\b/)![1]!;

    const { signal, send } = await signalAndSend(answer.workflowId, 'POST /otp/send');
    const names = send.spans.map((s) => s.operationName);
    expect(names).toEqual(
      expect.arrayContaining([
        'UpdateWithStartWorkflow:send',
        'HandleUpdate:send',
        'RunActivity:sendOtpCode',
        'POST /otp/send',
      ]),
    );
    const request = send.spans.find((s) => s.operationName === 'POST /otp/send')!;
    const activity = send.spans.find((s) => s.operationName === 'RunActivity:sendOtpCode')!;
    expect(request.references.find((r) => r.refType === 'CHILD_OF')?.spanID).toBe(activity.spanID);
    expect(signal.references.some((r) => r.spanID === activity.spanID)).toBe(true);

    // The session's own span ends with it: once verified, the whole session is one trace.
    expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient, code })).toMatchObject({ status: 'verified' });
    const session = await exported(async () => {
      const trace = await jaeger.trace(send.traceID);
      return holds(trace, 'RunWorkflow:otpVerification') && trace;
    }, 'the ended session in the trace of its first send');
    expect(mentions(session, recipient)).toBe(false);
    expect(mentions(session, code)).toBe(false);
  });
});
