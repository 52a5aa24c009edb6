/**
 * Turning tracing on for a process: one tracer provider exporting over OTLP/HTTP, registered globally with
 * async context and W3C trace-context propagation, and Temporal's OpenTelemetry interceptor for the clients that
 * process creates (its workers': src/tracing/worker.ts). Off (nothing registered, nothing added) unless an OTLP
 * endpoint is configured.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { parseEnv, TracingEnv } from '../config.js';
import { ErrorDetailsFilter } from './error-details.js';

export interface Tracing {
  /** Where the spans go (the OTLP traces URL). */
  readonly endpoint: string;
  /** Sends the spans still buffered, then stops exporting. */
  shutdown(): Promise<void>;
  /** The span processor, for the workflow sandbox's exporter sink. */
  readonly spanProcessor: SpanProcessor;
  readonly resource: Resource;
}

let active: Tracing | undefined;

/** The OTLP traces URL the settings name, or undefined when tracing is off. */
export function tracesEndpointOf(settings: TracingEnv): string | undefined {
  if (settings.OTEL_SDK_DISABLED || settings.OTEL_TRACES_EXPORTER === 'none') return undefined;
  if (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (settings.OTEL_EXPORTER_OTLP_ENDPOINT)
    return `${settings.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/**
 * Starts exporting this process's spans when the environment configures an endpoint (once per process: a
 * second call returns the first's). `serviceName` applies unless OTEL_SERVICE_NAME is set.
 */
export function startTracingFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  return active ?? startTracing(serviceName, parseEnv(TracingEnv, env));
}

/** startTracingFromEnv for settings parsed already (a worker's, part of WorkerSettings). */
export function startTracing(serviceName: string, settings: TracingEnv): Tracing | undefined {
  if (active) return active;
  const endpoint = tracesEndpointOf(settings);
  if (!endpoint) return undefined;
  const resource = new Resource({ 'service.name': settings.OTEL_SERVICE_NAME ?? serviceName });
  const spanProcessor = new ErrorDetailsFilter(new BatchSpanProcessor(new OTLPTraceExporter({ url: endpoint })));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  active = {
    endpoint,
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
  return active;
}

/** The tracing this process started, if any. */
export function activeTracing(): Tracing | undefined {
  return active;
}

/** The workflow interceptors of `tracingClientInterceptors`, to add to a client's own; empty without tracing. */
export function tracingWorkflowClientInterceptors(): OpenTelemetryWorkflowClientInterceptor[] {
  return active ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** The client interceptors that start a workflow's trace (or carry the caller's) into its headers. */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  return active ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}
