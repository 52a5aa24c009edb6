/**
 * The workflow bundle stays light: Temporal evaluates its modules again for every workflow, and a campaign
 * runs one workflow per message. Workflow code takes the contract's values from src/api/constants.ts.
 */
import { describe, expect, it } from 'vitest';
import { OtpVerifyUpdate } from '../../src/api/otp-io.js';
import { bundleMsgflowWorkflows } from '../../src/worker.js';
import { isOtpVerifyUpdate } from '../../src/definitions/otp.js';

describe('workflow bundle', () => {
  it('leaves out zod and the phone-number metadata', { timeout: 120_000 }, async () => {
    const { code } = await bundleMsgflowWorkflows();
    const modules = [...code.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((m) => m[1]!);
    expect(modules.some((m) => m.startsWith('./workflows/'))).toBe(true);
    expect(modules.filter((m) => /node_modules\/(zod|libphonenumber-js)\//.test(m))).toEqual([]);
  });

  it('checks a verify update as the OtpVerifyUpdate schema does', () => {
    const sealed = 'v1.key-1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const samples: unknown[] = [
      { sealedCode: sealed },
      { sealedCode: sealed, extra: 1 },
      { sealedCode: '123456' },
      { sealedCode: 'v1..abc' },
      { sealedCode: 42 },
      {},
      null,
      'v1.k.abc',
      [sealed],
    ];
    for (const sample of samples)
      expect(isOtpVerifyUpdate(sample), JSON.stringify(sample)).toBe(OtpVerifyUpdate.safeParse(sample).success);
    expect(isOtpVerifyUpdate({ sealedCode: sealed })).toBe(true);
  });
});
