/** Helpers for the operations tests: raw histories straight from the server, polling visibility. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
// A CommonJS module whose named exports Node's ESM loader cannot detect: take them off the default export.
import proto from '@temporalio/proto';

export type RawHistory = proto.temporal.api.history.v1.IHistory;

/**
 * A workflow's history exactly as the server stores it: the plain gRPC service, no data converter, no
 * codec. Returns the events and their serialized bytes (what a database dump would show).
 */
export async function rawHistory(
  client: Client,
  workflowId: string,
): Promise<{ events: proto.temporal.api.history.v1.IHistoryEvent[]; bytes: Buffer }> {
  const events: proto.temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  const bytes = Buffer.from(proto.temporal.api.history.v1.History.encode({ events }).finish());
  return { events, bytes };
}

/** Visibility is eventually consistent: retries `probe` until it returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}

/** Workflow ids matching a visibility query. */
export async function listIds(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}
