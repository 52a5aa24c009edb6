/** When a process traces, and where its spans go: OpenTelemetry's standard variables as msgflow reads them. */
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseEnv, TracingEnv } from '../../src/config.js';
import { tracesEndpointOf } from '../../src/tracing/setup.js';
import { activeTraceParent, linkTo } from '../../src/tracing/spans.js';

const endpointOf = (env: Record<string, string>) => tracesEndpointOf(parseEnv(TracingEnv, env));

describe('tracing settings', () => {
  it('is off without an endpoint, and when turned off explicitly', () => {
    expect(endpointOf({})).toBeUndefined();
    expect(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  it('sends to <endpoint>/v1/traces, or to the traces endpoint as given', () => {
    expect(endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(
      endpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x' }),
    ).toBe('http://t/x');
  });

  it('refuses what it cannot do with a clear error', () => {
    expect(() => parseEnv(TracingEnv, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(ConfigError);
    expect(() => parseEnv(TracingEnv, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/http\/json/);
    expect(() => parseEnv(TracingEnv, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/URL/);
  });
});

describe('trace parents kept with a message', () => {
  const spanContext = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  };

  it('writes the active span as a W3C traceparent and links back to the same span', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      expect(activeTraceParent()).toBeUndefined();
      const written = context.with(trace.setSpanContext(context.active(), spanContext), () => activeTraceParent());
      expect(written).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      expect(linkTo(written)).toEqual([{ context: { ...spanContext, isRemote: true } }]);
    } finally {
      context.disable();
    }
  });

  it('links to nothing for a missing, malformed or all-zero traceparent', () => {
    expect(linkTo(undefined)).toEqual([]);
    expect(linkTo(null)).toEqual([]);
    expect(linkTo('01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toEqual([]);
    expect(linkTo('00-00000000000000000000000000000000-b7ad6b7169203331-01')).toEqual([]);
  });
});
