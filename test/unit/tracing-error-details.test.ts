/** Spans leave the process with their error status and type, never an error's message or stack. */
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { ErrorDetailsFilter } from '../../src/tracing/error-details.js';

function tracerExportingTo(exporter: InMemorySpanExporter) {
  const provider = new BasicTracerProvider({
    spanProcessors: [new ErrorDetailsFilter(new SimpleSpanProcessor(exporter))],
  });
  return provider.getTracer('test');
}

describe('error details in exported spans', () => {
  it("drops a failed span's error message and stack, keeping its status and the error's type", () => {
    const exporter = new InMemorySpanExporter();
    const span = tracerExportingTo(exporter).startSpan('RunActivity:sendSms');
    const error = new TypeError('the provider refused +2348031110001: "Your code is 123456"');
    span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    span.setAttribute('temporalWorkflowId', 'sms:k1');
    span.end();

    const [exported] = exporter.getFinishedSpans();
    expect(exported!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'TypeError' });
    expect(exported!.events.map((e) => e.attributes)).toEqual([{ 'exception.type': 'TypeError' }]);
    expect(exported!.attributes).toEqual({ temporalWorkflowId: 'sms:k1' });
    expect(exported!.spanContext().traceId).toBe(span.spanContext().traceId);
    expect(JSON.stringify([exported!.status, exported!.events])).not.toMatch(/2348031110001|123456/);
  });

  it('passes a span without an error as it is', () => {
    const exporter = new InMemorySpanExporter();
    const span = tracerExportingTo(exporter).startSpan('POST /sms/send');
    span.addEvent('retry', { attempt: 2 });
    span.end();
    const [exported] = exporter.getFinishedSpans();
    expect(exported).toBe(span);
    expect(exported!.events[0]!.attributes).toEqual({ attempt: 2 });
  });
});
