import { describe, expect, it } from 'vitest';
import { nextBuildId } from '../support/cluster/deploy.js';
import { pinnedMove } from '../reliability/support/chaos/checker.js';

describe("the fault run's deploy", () => {
  it('names each new build after the current one', () => {
    expect(nextBuildId('3f9a2b1c4d5e')).toBe('3f9a2b1c4d5e-2');
    expect(nextBuildId('3f9a2b1c4d5e-2')).toBe('3f9a2b1c4d5e-3');
    expect(nextBuildId('3f9a2b1c4d5e-9')).toBe('3f9a2b1c4d5e-10');
  });

  it('finds a pinned run that moved builds, and lets auto-upgrade runs move', () => {
    expect(pinnedMove('sendSms', ['a', 'a', 'a'])).toBeUndefined();
    expect(pinnedMove('otpVerification', [])).toBeUndefined();
    expect(pinnedMove('otpVerification', ['a', 'a', 'a-2'])).toBe('otpVerification started on build a, task 3 on a-2');
    expect(pinnedMove('smsCampaign', ['a', 'a-2'])).toBeUndefined();
    expect(pinnedMove('someoneElsesType', ['a', 'b'])).toBeUndefined();
  });
});
