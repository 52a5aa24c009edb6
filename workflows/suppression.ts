/**
 * Opt-outs, checked when a workflow is about to send: the suppression list as it is then (a schedule's each
 * run, each campaign chunk), read by an activity whose answer the history keeps.
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { createSuppressionActivities } from '../activities/suppression.js';
import { STORE_ACTIVITY_OPTIONS } from './options.js';

const activities = proxyActivities<ReturnType<typeof createSuppressionActivities>>(STORE_ACTIVITY_OPTIONS);

export interface ScreenedRecipients {
  /** The recipients to send to, in their order. */
  send: string[];
  /** The recipients on the suppression list, not sent to. */
  suppressed: string[];
}

/**
 * Whether this run checks the suppression list. Runs recorded before it existed replay without the check, and
 * without an await in its place (callers test this first), so their commands come in the same order.
 */
export function checksSuppressionList(): boolean {
  return patched('suppression-list');
}

/** Splits recipients (international digits) into those to send to and those who opted out. */
export async function screenRecipients(recipients: string[]): Promise<ScreenedRecipients> {
  if (recipients.length === 0) return { send: recipients, suppressed: [] };
  const { suppressed } = await activities.screenRecipients({ recipients });
  const skip = new Set(suppressed);
  return { send: recipients.filter((r) => !skip.has(r)), suppressed };
}

/** What a run that does not check the list sends to. */
export function unscreened(recipients: string[]): ScreenedRecipients {
  return { send: recipients, suppressed: [] };
}
