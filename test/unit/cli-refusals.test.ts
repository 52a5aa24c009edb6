/**
 * How a command ends when its start is refused or its campaign is gone: the message on stderr, the exit status,
 * and a pointer to --help only where an option is at fault.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { CommanderError } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { notFoundMessage } from '../../src/cli/campaign.js';
import { EXIT_CODES, started } from '../../src/cli/common.js';
import { KeyReusedError } from '../../src/starter/start-once.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';

async function stderrOfRefusal(error: Error): Promise<{ stderr: string; exitCode: number }> {
  const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  const ended = await started(Promise.reject(error)).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(ended).toBeInstanceOf(CommanderError);
  return {
    stderr: printed.mock.calls.map((call) => call.join(' ')).join('\n'),
    exitCode: (ended as CommanderError).exitCode,
  };
}

describe('a refused start', () => {
  afterEach(() => vi.restoreAllMocks());

  it('names a reused key and exits 2, without sending the user to --help (no option is wrong)', async () => {
    const { stderr, exitCode } = await stderrOfRefusal(new KeyReusedError('demo-1', 'sms:demo-1'));
    expect(exitCode).toBe(EXIT_CODES.badInput);
    expect(stderr).toBe(
      'key "demo-1" was already used with another input (workflow sms:demo-1); use a new key for a new send',
    );
  });

  it('names input the facade refused, exits 2 and points at --help', async () => {
    const { stderr, exitCode } = await stderrOfRefusal(
      new InvalidWorkflowInputError('Invalid SMS', [{ path: 'recipients.0', message: 'not a phone number' }]),
    );
    expect(exitCode).toBe(EXIT_CODES.badInput);
    expect(stderr).toBe('Invalid SMS: recipients.0 not a phone number\n(see --help for the options)');
  });

  it('leaves any other error to the caller', async () => {
    const other = new Error('connection refused');
    await expect(started(Promise.reject(other))).rejects.toBe(other);
  });
});

describe('a campaign command on a campaign that is not running', () => {
  it('says the campaign ended when Temporal answers "already completed"', () => {
    const error = new WorkflowNotFoundError('workflow execution already completed', 'campaign:march', undefined);
    expect(notFoundMessage(error)).toBe(
      'campaign:march has already ended: nothing to change (workflow execution already completed)',
    );
  });

  it('says not found for a campaign that does not exist', () => {
    const error = new WorkflowNotFoundError('workflow not found for ID: campaign:nope', 'campaign:nope', undefined);
    expect(notFoundMessage(error)).toBe('not found: workflow not found for ID: campaign:nope');
  });
});
