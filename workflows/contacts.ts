/**
 * `checkContacts`: looks up many numbers and verifies many email addresses, a bounded number at a time on
 * the rate-limited provider queue, and splits them into valid and invalid — so a campaign can drop
 * undeliverable recipients before paying for them. Continues as new when the history grows long.
 */
import { continueAsNew, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CheckedContact, createContactActivities } from '../activities/contacts.js';
import { CONTACT_CHECK_DEFAULT_CONCURRENCY, CONTACT_CHECK_DEFAULT_PER_RUN } from '../src/api/constants.js';
import type { CheckContactsInput, CheckContactsResult, ContactCheck } from '../src/api/otp-io.js';
import { contactsProgressQuery } from '../src/definitions/contacts.js';
import { providerTaskQueue } from '../src/definitions/task-queues.js';
import { checkFirstInput } from './input-check.js';
import { PROVIDER_ACTIVITY_OPTIONS } from './options.js';

/** What a run hands to the next when it continues as new. `seq` keeps the input's order. */
export interface CheckContactsCarry {
  done: Array<{ seq: number; check: ContactCheck }>;
  /** Contacts dispatched by earlier runs (the seq of this run's first contact). */
  offset: number;
  cost: number;
  currency: string | null;
}

export async function checkContacts(
  input: CheckContactsInput,
  carry?: CheckContactsCarry,
): Promise<CheckContactsResult> {
  checkFirstInput('checkContacts', input);
  // Either list may be left out of a start by type name, as the schema's input allows.
  const given: Partial<CheckContactsInput> = input;
  const pending: Array<{ kind: ContactCheck['kind']; value: string }> = [
    ...(given.numbers ?? []).map((value) => ({ kind: 'number' as const, value })),
    ...(given.emails ?? []).map((value) => ({ kind: 'email' as const, value })),
  ];
  const done = carry?.done ?? [];
  const offset = carry?.offset ?? 0;
  let cost = carry?.cost ?? 0;
  let currency = carry?.currency ?? null;
  setHandler(contactsProgressQuery, () => ({ checked: done.length, total: offset + pending.length }));

  const provider = proxyActivities<ReturnType<typeof createContactActivities>>({
    ...PROVIDER_ACTIVITY_OPTIONS,
    taskQueue: providerTaskQueue(workflowInfo().taskQueue),
  });

  const perRun = input.checksPerRun ?? CONTACT_CHECK_DEFAULT_PER_RUN;
  let next = 0;
  const lane = async () => {
    while (next < pending.length && next < perRun && !workflowInfo().continueAsNewSuggested) {
      const seq = offset + next;
      const contact = pending[next++]!;
      const checked: CheckedContact =
        contact.kind === 'number'
          ? await provider.lookupNumber(contact.value)
          : await provider.verifyEmail(contact.value);
      done.push({ seq, check: checked.check });
      cost += checked.cost;
      currency ??= checked.currency;
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(input.concurrency ?? CONTACT_CHECK_DEFAULT_CONCURRENCY, pending.length) }, lane),
  );

  if (next < pending.length) {
    const rest = pending.slice(next);
    await continueAsNew<typeof checkContacts>(
      {
        numbers: rest.filter((c) => c.kind === 'number').map((c) => c.value),
        emails: rest.filter((c) => c.kind === 'email').map((c) => c.value),
        concurrency: input.concurrency,
        checksPerRun: input.checksPerRun,
      },
      { done, offset: offset + next, cost, currency },
    );
  }

  const checks = [...done].sort((a, b) => a.seq - b.seq).map((d) => d.check);
  return { valid: checks.filter((c) => c.valid), invalid: checks.filter((c) => !c.valid), cost, currency };
}
