import { describe, expect, it } from 'vitest';
import {
  type Charge,
  checkTeamShares,
  MIN_JUDGED_REQUESTS,
  senderOfKey,
} from '../reliability/support/chaos/checker-promises.js';
import type { FaultRecord } from '../reliability/support/chaos/nemesis.js';
import type { WorkloadLog } from '../reliability/support/chaos/workload.js';

const STARTED_AT = Date.parse('2026-01-01T00:00:00Z');
const CLINIC = Array.from({ length: 300 }, (_, i) => `2348081${String(i).padStart(6, '0')}`);
const MARKETING = Array.from({ length: 300 }, (_, i) => `2348091${String(i).padStart(6, '0')}`);

function workload(): WorkloadLog {
  const team = (name: string, audience: string[]) => ({
    key: name,
    workflowId: `campaign:${name}`,
    audience,
    fate: 'complete' as const,
    steps: [],
    team: name,
  });
  return {
    sends: [],
    otps: [],
    campaigns: [team('clinic', CLINIC), team('marketing', MARKETING)],
    suppressedBefore: [],
    suppressedDuring: [],
    retriedCalls: 0,
    teamWeights: { clinic: 3, marketing: 1 },
  };
}

/** One request a second from `fromS`, the teams in turn as `pattern` says (e.g. 'CCCM'). */
function charges(pattern: string, count: number, fromS = 0): Charge[] {
  const next = { C: 0, M: 0 };
  return Array.from({ length: count }, (_, i) => {
    const letter = pattern[i % pattern.length] as 'C' | 'M';
    const n = next[letter]++;
    const recipient = `+${(letter === 'C' ? CLINIC : MARKETING)[n]}`;
    const workflow = letter === 'C' ? 'campaign:clinic' : 'campaign:marketing';
    return {
      id: `led_${i}`,
      reference: `msg_${i}`,
      recipient,
      idempotency_key: `${workflow}/run-1/chunk-${n}`,
      created_at: new Date(STARTED_AT + (fromS + i) * 1000).toISOString(),
    };
  });
}

function fault(atS: number, healedS: number): FaultRecord {
  return {
    fault: { atMs: atS * 1000, kind: 'kill-worker', target: 'worker-1', durationMs: (healedS - atS) * 1000 },
    atMs: atS * 1000,
    healedMs: healedS * 1000,
  };
}

function judge(all: Charge[], faults: FaultRecord[] = []) {
  const violations: string[] = [];
  const shares = checkTeamShares(workload(), all, faults, STARTED_AT, (rule, subject, detail) =>
    violations.push(`${rule} ${subject}: ${detail}`),
  );
  return { shares, violations };
}

describe("the fault run's team-shares rule", () => {
  it('passes shares at the weights, and names both teams when they are even', () => {
    const fair = judge(charges('CCCM', 80));
    expect(fair.violations).toEqual([]);
    expect(fair.shares).toMatchObject({ judged: true, requests: expect.any(Number) });
    expect(fair.shares.summary).toMatch(/^clinic=75%\(75%\),marketing=25%\(25%\)\//);

    const even = judge(charges('CM', 80));
    expect(even.violations).toHaveLength(2);
    expect(even.violations[0]).toMatch(/^team-shares team clinic: 50% of the \d+ requests/);
  });

  it('counts only requests outside faults (and 5 s after each heal) while both teams send', () => {
    // Even shares, but all of them during a fault or within 5 s of its heal: fair ones after.
    const all = [...charges('CM', 40), ...charges('CCCM', 60, 40)].map((c, i) => ({ ...c, id: `led_${i}` }));
    const { shares, violations } = judge(all, [fault(0, 36)]);
    expect(violations).toEqual([]);
    expect(shares.requests).toBeLessThanOrEqual(60);
    // Marketing alone after the clinic ran out: not counted.
    const tail = judge([...charges('CCCM', 60), ...charges('M', 30, 60).map((c, i) => ({ ...c, id: `t${i}` }))]);
    expect(tail.violations).toEqual([]);
  });

  it("counts a deploy's drain as fault-free: from its promotion on, new runs start on one build", () => {
    const all = charges('CCCM', 100);
    const deploy = { ...fault(0, 100), quietFromMs: 36_000 };
    const shares = judge(all, [deploy]).shares;
    expect(shares.judged).toBe(true);
    expect(shares.requests).toBeGreaterThan(50); // from 5 s after the promotion to the end (100 s)
    // The same fault without a promotion covers every request: nothing left to judge.
    expect(judge(all, [fault(0, 100)]).shares.judged).toBe(false);
  });

  it('says it did not judge too few requests', () => {
    const { shares, violations } = judge(charges('CM', MIN_JUDGED_REQUESTS - 2));
    expect(violations).toEqual([]);
    expect(shares.judged).toBe(false);
    expect(shares.summary).toMatch(/^not-judged\(\d+req<40\)$/);
  });
});

describe('the sender a charge key names', () => {
  it('reads single sends and campaign chunks, and nothing else', () => {
    expect(senderOfKey('sms:k-1/send')).toEqual({ workflowId: 'sms:k-1' });
    expect(senderOfKey('campaign:a-2026-01-01T00:00:00Z/run-9/chunk-12')).toEqual({
      workflowId: 'campaign:a-2026-01-01T00:00:00Z',
      runId: 'run-9',
    });
    expect(senderOfKey(null)).toBeUndefined();
    expect(senderOfKey('some-other-key')).toBeUndefined();
  });
});
