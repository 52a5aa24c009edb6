/**
 * A workflow run's history as the Temporal CLI prints it (`temporal workflow show --output json`): the proto3
 * JSON form that Worker.runReplayHistories reads and the history files hold.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface HistoryEvent {
  eventType: string;
  [attributes: string]: unknown;
}

export interface HistoryJson {
  events: HistoryEvent[];
}

export interface TemporalAddress {
  address: string;
  namespace: string;
}

/** The history's text as the CLI printed it, and its events. */
export async function fetchHistory(
  cli: string,
  temporal: TemporalAddress,
  workflowId: string,
  runId?: string,
): Promise<{ text: string; history: HistoryJson }> {
  const { stdout } = await promisify(execFile)(
    cli,
    [
      'workflow',
      'show',
      '--address',
      temporal.address,
      '--namespace',
      temporal.namespace,
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--output',
      'json',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return { text: stdout, history: JSON.parse(stdout) as HistoryJson };
}

/** The workflow type a history ran (from its first event). */
export function workflowTypeOf(history: HistoryJson): string {
  const started = history.events[0]?.workflowExecutionStartedEventAttributes as
    { workflowType: { name: string } } | undefined;
  if (!started) throw new Error('not a workflow history: its first event is not WorkflowExecutionStarted');
  return started.workflowType.name;
}
