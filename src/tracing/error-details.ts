/**
 * Failed spans without their errors' words. Temporal's interceptors record a failed activity's or workflow's
 * error message and stack in its span, and an error message may quote what the provider echoed back (a
 * number, a text). Before export, each span keeps its error status and the error's type, never a message or
 * a stack.
 */
import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

const WORDS = new Set(['exception.message', 'exception.stacktrace']);

export function withoutErrorDetails(span: ReadableSpan): ReadableSpan {
  const hasWords = span.status.message !== undefined || span.events.some((e) => e.name === 'exception');
  if (!hasWords) return span;
  const errorType = span.events.find((e) => e.name === 'exception')?.attributes?.['exception.type'];
  return Object.create(span, {
    status: { value: { code: span.status.code, ...(errorType ? { message: String(errorType) } : {}) } },
    events: {
      value: span.events.map((event) =>
        event.name === 'exception' && event.attributes
          ? {
              ...event,
              attributes: Object.fromEntries(Object.entries(event.attributes).filter(([key]) => !WORDS.has(key))),
            }
          : event,
      ),
    },
  }) as ReadableSpan;
}

/** Hands every ended span to `next` without its errors' messages and stacks. */
export class ErrorDetailsFilter implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.next.onEnd(withoutErrorDetails(span));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}
