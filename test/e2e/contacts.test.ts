/** checkContacts end to end: real lookups and email verifications in the sandbox, split into valid and invalid. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';
import { SA } from '../../src/definitions/search-attributes.js';
import { startTestStack } from '../support/stack.js';

describe('checkContacts', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const numbers = ['2348012345678', '12345', MAGIC_NUMBERS.undelivered, '+1 202-555-0100'];
  const emails = ['ada@example.com', 'bob@nomx.invalid', 'bounce@example.com', 'x@mailinator.com', 'not-an-email'];

  it('splits valid from invalid numbers and addresses, in input order, and charges each check once', async () => {
    const started = await stack.msgflow.checkContacts({ numbers, emails, concurrency: 3 });
    const result = await started.result();

    expect(result.valid.map((c) => [c.kind, c.value, c.normalized, c.reason])).toEqual([
      ['number', '2348012345678', '2348012345678', null],
      ['number', '+1 202-555-0100', MAGIC_NUMBERS.delivered, null],
      ['email', 'ada@example.com', 'ada@example.com', null],
      ['email', 'x@mailinator.com', 'x@mailinator.com', 'disposable'],
    ]);
    expect(result.invalid.map((c) => [c.kind, c.value, c.reason])).toEqual([
      ['number', '12345', 'invalid_number'],
      ['number', MAGIC_NUMBERS.undelivered, 'unreachable'],
      ['email', 'bob@nomx.invalid', 'no_mx_record'],
      ['email', 'bounce@example.com', 'mailbox_not_found'],
      ['email', 'not-an-email', 'invalid_syntax'],
    ]);

    const ledger = await stack.admin.ledger(stack.accountId!);
    const checks = ledger.filter((e) => e.kind === 'lookup' || e.kind === 'email_verification');
    expect(checks).toHaveLength(numbers.length + emails.length);
    expect(result.cost).toBe(checks.reduce((sum, e) => sum + e.amount, 0));
  });

  it('continues as new in long checks without losing or reordering a contact', async () => {
    const many = Array.from({ length: 7 }, (_, i) => `23480123456${String(40 + i)}`);
    const started = await stack.msgflow.checkContacts({
      numbers: [...many, '999'],
      emails: ['ada@example.com'],
      checksPerRun: 3,
    });
    const result = await started.result();
    expect(result.valid.map((c) => c.value)).toEqual([...many, 'ada@example.com']);
    expect(result.invalid.map((c) => c.value)).toEqual(['999']);

    const handle = stack.temporal.workflow.getHandle(started.workflowId);
    const { runId, raw, typedSearchAttributes } = await handle.describe();
    expect(raw.workflowExecutionInfo?.firstRunId).not.toBe(runId);
    // Operators still find the last run by kind.
    expect(typedSearchAttributes.get(SA.kind)).toBe('contacts');
  });

  it('refuses invalid input before anything is started', async () => {
    await expect(stack.msgflow.checkContacts({})).rejects.toThrow(InvalidWorkflowInputError);
    await expect(stack.msgflow.checkContacts({ numbers: ['1'] })).rejects.toThrow(/numbers/);
    await expect(stack.msgflow.checkContacts({ emails: Array.from({ length: 1001 }, () => 'a@b.co') })).rejects.toThrow(
      /emails/,
    );
  });
});
