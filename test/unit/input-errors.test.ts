/** An activity's input error is final: the retry policies name the error the message store raises for one. */
import { describe, expect, it } from 'vitest';
import { StoreInputError } from '../../src/store/index.js';
import { BOUNDED_RETRY, PROVIDER_RETRY, STORE_RETRY } from '../../workflows/retry-policies.js';

describe('activity input errors', () => {
  it('are not retried by the store and provider retry policies', () => {
    const type = new StoreInputError('number must be international digits').name;
    for (const policy of [STORE_RETRY, PROVIDER_RETRY, BOUNDED_RETRY])
      expect(policy.nonRetryableErrorTypes).toContain(type);
  });
});
