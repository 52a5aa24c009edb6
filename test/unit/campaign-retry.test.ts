/**
 * A retry's audience as the worker reads it: the built-in loader asks the store for the states it was given,
 * page by page, and hands each recipient back with the number first and their fields for a template; keys
 * and inputs name the campaign retried.
 */
import { describe, expect, it } from 'vitest';
import { keptInputOf, retryAudienceLoader, retryRow } from '../../activities/campaign-inputs.js';
import { RETRY_AUDIENCE_LOADER, retriedCampaignOf } from '../../src/api/campaign-retry.js';
import { rowOf } from '../../src/audience/sources.js';
import { retriedKeyOf, retryKeyOf } from '../../src/definitions/workflow-ids.js';
import type { MessageStore, RetryRecipientQuery } from '../../src/store/index.js';
import { formatEstimate } from '../../src/cli/campaign-retry.js';
import type { Client } from '@temporalio/client';
import { retryCampaign } from '../../src/starter/campaign-retry.js';
import { InvalidWorkflowInputError } from '../../src/starter/validate.js';

function fakeStore(asked: RetryRecipientQuery[]): Pick<MessageStore, 'campaignInputs'> {
  return {
    campaignInputs: {
      keep: async () => {},
      input: async () => null,
      keepRows: async () => {},
      retryRecipients: async (query) => {
        asked.push(query);
        return {
          rows: [
            { number: '+2348030000021', fields: { name: 'Ada', phone: '08030000021', recipient: 'old' } },
            { number: '+2348030000022', fields: null },
          ],
          next: 'bmV4dA',
        };
      },
    },
  };
}

const request = {
  cursor: null,
  limit: 500,
  campaign: { id: 'c', startedAt: '' },
  signal: new AbortController().signal,
};

describe('a retry audience', () => {
  it('reads the states asked for, from the cursor given, the number first and the fields kept', async () => {
    const asked: RetryRecipientQuery[] = [];
    const loader = retryAudienceLoader(fakeStore(asked));
    const page = await loader.readPage({
      ...request,
      cursor: 'cHJldg',
      params: { campaign: 'spring', statuses: ['failed', 'undelivered'] },
    });
    expect(asked).toEqual([
      { campaignKey: 'spring', statuses: ['failed', 'undelivered'], after: 'cHJldg', limit: 500 },
    ]);
    expect(page.nextCursor).toBe('bmV4dA');
    // The kept number is the one sent to, not the field it was read from (which may be in local form).
    const [ada, bola] = page.recipients.map((r) => rowOf(r as Record<string, unknown>, undefined));
    expect(ada).toEqual({
      entry: '+2348030000021',
      fields: { recipient: '+2348030000021', name: 'Ada', phone: '08030000021' },
    });
    expect(bola).toEqual({ entry: '+2348030000022', fields: { recipient: '+2348030000022' } });
  });

  it('refuses params that name no campaign or a state never retried, reading nothing', async () => {
    const asked: RetryRecipientQuery[] = [];
    const loader = retryAudienceLoader(fakeStore(asked));
    for (const params of [{ statuses: ['failed'] }, { campaign: 'spring', statuses: ['delivered'] }]) {
      await expect(loader.readPage({ ...request, params })).rejects.toMatchObject({ type: 'AudienceFormatInvalid' });
    }
    expect(asked).toEqual([]);
  });

  it('keeps a row without fields to its number', () => {
    expect(retryRow({ number: '+2348030000021', fields: null })).toEqual({ recipient: '+2348030000021' });
  });
});

describe('a retry names its campaign', () => {
  it('by its key and by its input', () => {
    expect(retryKeyOf('spring')).toBe('spring:retry');
    expect(retriedKeyOf('spring:retry:retry')).toBe('spring:retry');
    expect(retriedKeyOf('spring')).toBeNull();
    expect(retriedKeyOf(':retry')).toBeNull();
    const audience = {
      type: 'loader',
      name: RETRY_AUDIENCE_LOADER,
      params: { campaign: 'spring', statuses: ['failed'] },
    };
    expect(retriedCampaignOf({ audience })).toBe('spring');
    expect(retriedCampaignOf({ audience: { ...audience, name: 'dueCustomers' } })).toBeNull();
    expect(retriedCampaignOf({ audience: { type: 'file' } })).toBeNull();
  });

  it('tells its count and price', () => {
    const estimate = {
      recipients: 3,
      segments: 2,
      pricePerSegment: 3,
      cost: 18,
      currency: 'USD',
      balance: 100,
      spendCapRemaining: null,
    };
    expect(formatEstimate(estimate)).toBe('3 recipient(s), 6 segment(s), price 18 USD (balance 100 USD)');
    expect(formatEstimate({ ...estimate, totalSegments: 5 })).toContain('5 segment(s)');
    expect(formatEstimate(null)).toContain('no pre-flight estimate');
  });
});

describe('a retry refused before anything is asked', () => {
  // A client that fails any use: the refusals below must come first.
  const client = new Proxy(
    {},
    {
      get: () => {
        throw new Error('Temporal was asked');
      },
    },
  ) as Client;
  const target = { client, taskQueue: 'q', store: fakeStore([]) };

  it('when its key would pass the key length limit', async () => {
    await expect(retryCampaign(target, 'k'.repeat(145))).rejects.toThrow(InvalidWorkflowInputError);
    await expect(retryCampaign(target, 'k'.repeat(145))).rejects.toThrow(/its retry's key/);
    await expect(retryCampaign(target, 'k'.repeat(144))).rejects.toThrow('Temporal was asked');
  });

  it('when a state asked for is never retried', async () => {
    await expect(retryCampaign(target, 'spring', { statuses: ['delivered'] })).rejects.toThrow(
      InvalidWorkflowInputError,
    );
    await expect(retryCampaign(target, 'spring', { statuses: [] })).rejects.toThrow(InvalidWorkflowInputError);
  });
});

describe('the input kept for a retry', () => {
  it("keeps no inline audience's numbers, and everything else as given", () => {
    const inline = { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: ['2348030000021'] } };
    expect(keptInputOf(inline)).toEqual({ ...inline, audience: { type: 'inline', recipients: [] } });
    const file = { sender: 'ACME', message: 'Hi {name}', audience: { type: 'file', path: '/data/due.csv' } };
    expect(keptInputOf(file)).toEqual(file);
  });
});
