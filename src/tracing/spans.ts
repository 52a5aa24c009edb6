/**
 * msgflow's own spans, through the OpenTelemetry API alone: without a registered tracer provider (tracing off,
 * src/tracing/setup.ts) every call here is a no-op. Span attributes name what lets an operator find a message
 * (workflow id, provider message id, campaign key), never a number, a text or a code.
 */
import {
  type Attributes,
  context,
  isSpanContextValid,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

export { SpanKind, type Attributes, type Span };

const TRACER_NAME = 'msgflow';

/** Runs `fn` in a new active span, ended when it settles; a throw marks the span failed with the error's name. */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; links?: Link[] },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, options, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      // The name only: messages may quote what the provider echoed back, personal data included.
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'Error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** How many provider message ids a span lists; a campaign's batch is searchable by its first ones. */
const LISTED_IDS = 20;

/** `msgflow.provider_message_id` for one message (searchable as a tag), a capped list for several. */
export function messageIdAttributes(ids: readonly string[]): Attributes {
  if (ids.length === 1) return { 'msgflow.provider_message_id': ids[0]! };
  return ids.length ? { 'msgflow.provider_message_ids': ids.slice(0, LISTED_IDS) } : {};
}

export function markFailed(span: Span, reason: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}

/**
 * The active span as a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), kept with a sent message so
 * the ingress can link its status event back to the send; undefined when nothing is traced.
 */
export function activeTraceParent(): string | undefined {
  const spanContext = trace.getSpan(context.active())?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

/**
 * Names the messages a send made on the active span (the sending activity's), and answers its traceparent to
 * keep with them.
 */
export function recordSent(providerMessageIds: readonly string[], attributes: Attributes = {}): string | undefined {
  trace.getActiveSpan()?.setAttributes({ ...messageIdAttributes(providerMessageIds), ...attributes });
  return activeTraceParent();
}

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A link to the span a stored `traceparent` names; none for a missing or malformed one. */
export function linkTo(traceParent: string | null | undefined, attributes?: Attributes): Link[] {
  const match = traceParent ? TRACE_PARENT.exec(traceParent) : null;
  if (!match) return [];
  const spanContext: SpanContext = {
    traceId: match[1]!,
    spanId: match[2]!,
    traceFlags: Number.parseInt(match[3]!, 16),
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? [{ context: spanContext, ...(attributes ? { attributes } : {}) }] : [];
}
