/**
 * Contact-check activities (provider queue): one number lookup or one email verification each, so the
 * provider queue's rate limit counts every request. Both are charged and carry no idempotency key (the
 * spec gives them none): a retry after a lost response may be charged again — a few minor units, against
 * a check that would otherwise fail.
 */
import { Context } from '@temporalio/activity';
import type { ContactCheck } from '../src/api/otp-io.js';
import type { MessagingClient } from '../src/client/client.js';
import { callProvider } from './errors.js';

export interface CheckedContact {
  check: ContactCheck;
  cost: number;
  currency: string;
}

export function createContactActivities(client: MessagingClient) {
  const signal = () => Context.current().cancellationSignal;

  return {
    /** Worth sending to: a valid number that is reachable (a phone that is off is not, for now). */
    async lookupNumber(number: string): Promise<CheckedContact> {
      const lookup = await callProvider(() => client.lookups.create({ number }, { signal: signal() }));
      const reason = !lookup.valid ? 'invalid_number' : !lookup.reachable ? 'unreachable' : null;
      return {
        check: {
          kind: 'number',
          value: number,
          valid: reason === null,
          normalized: lookup.e164?.replace(/^\+/, '') ?? null,
          reason,
        },
        cost: lookup.cost,
        currency: lookup.currency,
      };
    },

    /** The provider's verdict: `risky` (disposable) addresses count as valid, with the reason kept. */
    async verifyEmail(email: string): Promise<CheckedContact> {
      const verification = await callProvider(() => client.email.verify({ email }, { signal: signal() }));
      return {
        check: {
          kind: 'email',
          value: email,
          valid: verification.valid,
          normalized: verification.valid ? email : null,
          reason: verification.reason,
        },
        cost: verification.cost,
        currency: verification.currency,
      };
    },
  };
}
