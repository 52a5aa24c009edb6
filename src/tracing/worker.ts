/**
 * What a traced worker adds (src/tracing/setup.ts turned tracing on): activity spans, the workflow-side
 * interceptors to bundle, and the sink their spans leave the workflow sandbox through. Kept apart from
 * setup.ts because it names the worker's types, an optional peer.
 */
import { createRequire } from 'node:module';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryNexusInboundInterceptor,
  OpenTelemetryNexusOutboundInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks, NexusInterceptorsFactory } from '@temporalio/worker';
import { activeTracing } from './setup.js';

/** The workflow-side interceptors, bundled with the workflows when tracing is on. */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** What a traced worker adds: activity spans, and the sink the bundled workflow interceptors export through. */
export interface WorkerTracing {
  activityInterceptors: ActivityInterceptorsFactory[];
  /** A span per Nexus operation, the child of the caller's (its context arrives in the Nexus request's headers). */
  nexusInterceptors: NexusInterceptorsFactory[];
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

export function workerTracing(): WorkerTracing | undefined {
  const active = activeTracing();
  if (!active) return undefined;
  return {
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    nexusInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryNexusInboundInterceptor(ctx),
        outbound: new OpenTelemetryNexusOutboundInterceptor(ctx),
      }),
    ],
    sinks: { exporter: makeWorkflowExporter(active.spanProcessor, active.resource) },
  };
}
