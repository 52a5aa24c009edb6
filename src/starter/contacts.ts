/** Contact checks for backend services (and campaigns): start `checkContacts` and await the split. */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { CheckContactsInput, CheckContactsResult } from '../api/otp-io.js';
import { SA } from '../definitions/search-attributes.js';
import { contactsWorkflowId } from '../definitions/workflow-ids.js';
import type { checkContacts } from '../../workflows/contacts.js';
import { startOnce } from './start-once.js';
import type { StartedWorkflow } from './started-workflow.js';

export async function startContactCheck(
  client: Client,
  taskQueue: string,
  input: CheckContactsInput,
  key: string = randomUUID(),
): Promise<StartedWorkflow<CheckContactsResult>> {
  const handle = await startOnce<typeof checkContacts>(client, 'checkContacts', key, {
    workflowId: contactsWorkflowId(key),
    taskQueue,
    args: [input],
    typedSearchAttributes: [{ key: SA.kind, value: 'contacts' }],
    staticSummary: `Check ${input.numbers.length} number(s) and ${input.emails.length} email address(es)`,
  });
  // A check may continue as new; result() follows the chain to the last run.
  return { workflowId: handle.workflowId, result: () => handle.result() };
}
