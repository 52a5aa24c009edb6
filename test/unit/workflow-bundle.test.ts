/**
 * The workflow bundle stays light: Temporal evaluates its modules again for every workflow, and a campaign
 * runs one workflow per message. Workflow code takes the contract's values from src/api/constants.ts.
 */
import { describe, expect, it } from 'vitest';
import { OtpVerifyUpdate } from '../../src/api/otp-io.js';
import { bundleMsgflowWorkflows, createMsgflowWorker, type MsgflowWorkerOptions } from '../../src/worker.js';
import { isOtpVerifyUpdate } from '../../src/definitions/otp.js';

describe('workflow bundle', () => {
  it('leaves out zod and the phone-number metadata', { timeout: 120_000 }, async () => {
    const { code } = await bundleMsgflowWorkflows();
    const modules = [...code.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((m) => m[1]!);
    expect(modules.some((m) => m.startsWith('./workflows/'))).toBe(true);
    expect(modules.filter((m) => /node_modules\/(zod|libphonenumber-js)\//.test(m))).toEqual([]);
  });

  it(
    "gives each workflow its versioning behaviour only in a versioned worker's bundle",
    { timeout: 120_000 },
    async () => {
      // The server refuses a task completed with a behaviour by an unversioned worker (INVALID_ARGUMENT).
      const entries = async (versioned: boolean) => {
        const { code } = (await bundleMsgflowWorkflows({ versioned, traced: false })) as { code: string };
        return [...code.matchAll(/^\/\*\*\*\/ "\.\/workflows\/(versioned|index)\.[jt]s"/gm)].map((m) => m[1]);
      };
      expect(await entries(false)).toEqual(['index']);
      expect((await entries(true)).sort()).toEqual(['index', 'versioned']);
    },
  );

  it('is refused by a worker of the other mode, before the worker starts', { timeout: 120_000 }, async () => {
    const versioning = { deploymentName: 'msgflow', buildId: 'b1', makeCurrent: 'never' as const };
    // Refused before anything is connected or opened: these are never touched.
    const unused = { connection: {}, messaging: {}, store: {} } as unknown as Pick<
      MsgflowWorkerOptions,
      'connection' | 'messaging' | 'store'
    >;
    const plain = await bundleMsgflowWorkflows({ traced: false });
    const versioned = await bundleMsgflowWorkflows({ traced: false, versioned: true });
    await expect(
      createMsgflowWorker({ ...unused, providerRatePerMinute: 60, workflowBundle: plain, versioning }),
    ).rejects.toThrow(/bundle is for an unversioned worker/);
    await expect(
      createMsgflowWorker({ ...unused, providerRatePerMinute: 60, workflowBundle: versioned }),
    ).rejects.toThrow(/bundle is for a versioned worker/);
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
