/**
 * Links between a Nexus caller's workflow and the msgflow workflow its operation started, shown in the Temporal
 * UI: the workflow msgflow starts carries the caller's links (its NexusOperationScheduled event), and the
 * operation answers with a link to that workflow, which the caller's history records.
 *
 * The facade starts its workflows itself, so the links ride on a client interceptor of the Nexus worker's
 * msgflow client: while a handler runs `withNexusLinks(ctx, …)`, every workflow that client starts gets them.
 * The SDK attaches them through its internal start options, as its own `startWorkflow` helper does (there is no
 * public option for links on a start in the TypeScript SDK 1.24).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { InternalWorkflowStartOptionsSymbol } from '@temporalio/client/lib/internal.js';
import {
  convertNexusLinkToTemporalLink,
  convertTemporalLinkToNexusLink,
} from '@temporalio/nexus/lib/link-converter.js';
import type { temporal } from '@temporalio/proto';
import type * as nexus from 'nexus-rpc';

type Link = temporal.api.common.v1.ILink;

const operation = new AsyncLocalStorage<nexus.StartOperationContext>();

/** Runs `call` with the operation's links attached to every workflow the linking client starts in it. */
export function withNexusLinks<T>(ctx: nexus.StartOperationContext, call: () => Promise<T>): Promise<T> {
  return operation.run(ctx, call);
}

/** The interceptor of the client the Nexus handlers' facade uses. */
export const nexusLinksInterceptor: WorkflowClientInterceptor = {
  async startWithDetails(input, next) {
    const ctx = operation.getStore();
    if (!ctx) return next(input);
    const internal: { links: Link[]; responseLink?: Link } = { links: inboundLinksOf(ctx) };
    const options = { ...input.options, [InternalWorkflowStartOptionsSymbol]: internal } as typeof input.options;
    const output = await next({ ...input, options });
    // Servers since 1.27 answer a start with a link to the started workflow's first event.
    if (internal.responseLink) {
      const link = tryConvert(() => convertTemporalLinkToNexusLink(internal.responseLink!));
      if (link) ctx.outboundLinks.push(link);
    }
    return output;
  },
};

function inboundLinksOf(ctx: nexus.StartOperationContext): Link[] {
  return ctx.inboundLinks.flatMap((link) => {
    const converted = tryConvert(() => convertNexusLinkToTemporalLink(link));
    return converted ? [converted] : [];
  });
}

/** A link the SDK cannot convert (another kind than a workflow event's) is left out: links are only for the UI. */
function tryConvert<T>(convert: () => T): T | undefined {
  try {
    return convert();
  } catch {
    return undefined;
  }
}
