/**
 * The OTP fraud guard in the message store: each rule blocks (or, in monitor mode, flags) what it should and
 * lets the rest through, a retried send keeps its first decision, blocked sends do not count against a
 * window, and the backtest replaying the recorded history with the live rules reaches the live decisions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_OTP_GUARD_RULES, type OtpGuardRules, otpGuardConfig } from '../../src/api/otp-guard.js';
import { generateKey, parseKeyRing } from '../../src/crypto/keyring.js';
import type { MessageStore } from '../../src/store/index.js';
import { backtest, channelConversion } from '../../src/store/otp-guard-replay.js';
import { DIALECTS, type DialectHarness, harness } from './dialects.js';

const T0 = Date.parse('2026-11-25T08:00:00Z');
const MINUTE = 60_000;
const rules = (overrides: Partial<OtpGuardRules>): OtpGuardRules => ({ ...NO_OTP_GUARD_RULES, ...overrides });

describe.each(DIALECTS)('the OTP fraud guard on %s', (dialect) => {
  let h: DialectHarness;
  let store: MessageStore;
  let sends = 0;

  beforeAll(async () => {
    h = await harness(dialect);
    store = await h.open(await h.freshLocation());
  });
  afterAll(() => h?.close());

  /** One send judged at `at` (each its own session unless named). */
  function send(number: string, guard: OtpGuardRules, at: number, session = `s${++sends}`, key = `${session}/1`) {
    return store.otp.judgeSend({ key, session, purpose: 'login', number, at }, guard);
  }

  it('lets a prefix have `max` sends per window, then blocks it until the oldest leaves the window', async () => {
    const guard = rules({ prefixVelocity: { digits: 4, max: 3, window: 10 * MINUTE } });
    for (let i = 0; i < 3; i++)
      expect((await send(`234803100000${i}`, guard, T0 + i * MINUTE)).verdict, `send ${i}`).toBe('sent');
    expect(await send('2348031000009', guard, T0 + 5 * MINUTE)).toEqual({
      verdict: 'blocked',
      reason: 'prefix_velocity',
      retryAfterSeconds: 5 * 60,
    });
    // Another prefix is not affected, and a blocked send takes no place in the window.
    expect((await send('2348032000001', guard, T0 + 5 * MINUTE)).verdict).toBe('sent');
    expect((await send('2348031000008', guard, T0 + 10 * MINUTE)).verdict).toBe('sent');
  });

  it('gives a retried send (same key) its first decision without counting it again', async () => {
    const guard = rules({ prefixVelocity: { digits: 4, max: 1, window: 10 * MINUTE } });
    const first = await send('2348033000001', guard, T0, 'retried', 'retried/1');
    expect(first.verdict).toBe('sent');
    expect(await send('2348033000001', guard, T0 + 1000, 'retried', 'retried/1')).toEqual({ ...first, replayed: true });
    expect((await send('2348033000002', guard, T0 + 2000)).reason).toBe('prefix_velocity');
  });

  it("counts a country's sends across its prefixes", async () => {
    const guard = rules({ countryVelocity: { max: 2, window: 60 * MINUTE } });
    expect((await send('233241000001', guard, T0)).verdict).toBe('sent');
    expect((await send('233551000001', guard, T0 + 1)).verdict).toBe('sent');
    expect(await send('233201000001', guard, T0 + 2)).toMatchObject({ verdict: 'blocked', reason: 'country_velocity' });
    expect((await send('254712000001', guard, T0 + 3)).verdict).toBe('sent');
  });

  it('blocks a prefix whose recent sends rarely verify, once it has had enough of them', async () => {
    const guard = rules({ conversion: { minRate: 0.5, minSends: 4, coolOff: 60 * MINUTE } });
    const sessions = ['c1', 'c2', 'c3', 'c4'];
    for (const [i, session] of sessions.entries())
      expect((await send(`25471300000${i}`, guard, T0 + i, session)).verdict).toBe('sent');
    await store.otp.recordVerified('c1', T0 + 10);
    expect(await send('254713000009', guard, T0 + 20)).toEqual({
      verdict: 'blocked',
      reason: 'low_conversion',
      retryAfterSeconds: 60 * 60,
    });
    // Two of four verified is the minimum rate: the prefix may send again.
    await store.otp.recordVerified('c2', T0 + 30);
    await store.otp.recordVerified('c2', T0 + 31);
    expect((await send('254713000008', guard, T0 + 40)).verdict).toBe('sent');
  });

  it('applies the country rule, the deny list before it and the allow list before everything', async () => {
    const guard = rules({
      countries: { mode: 'allow', list: ['NG', 'GH'] },
      deny: ['2348034000001'],
      allow: ['254714000001'],
    });
    expect((await send('2348034000002', guard, T0)).verdict).toBe('sent');
    expect(await send('2348034000001', guard, T0)).toMatchObject({ verdict: 'blocked', reason: 'deny_list' });
    expect(await send('254714000002', guard, T0)).toMatchObject({
      verdict: 'blocked',
      reason: 'country_not_allowed',
      retryAfterSeconds: null,
    });
    expect((await send('254714000001', guard, T0)).verdict).toBe('sent');
    const blockList = rules({ countries: { mode: 'block', list: ['KE'] } });
    expect((await send('254714000003', blockList, T0)).reason).toBe('country_not_allowed');
    expect((await send('2348034000003', blockList, T0)).verdict).toBe('sent');
  });

  it('in monitor mode, flags what it would block and counts it as sent', async () => {
    const guard = rules({ monitor: true, prefixVelocity: { digits: 4, max: 1, window: 10 * MINUTE } });
    expect((await send('2348035000001', guard, T0)).verdict).toBe('sent');
    expect(await send('2348035000002', guard, T0 + 1)).toMatchObject({
      verdict: 'monitored',
      reason: 'prefix_velocity',
    });
    // Enforced now: the flagged send reached the provider, so the window holds two.
    const enforced = rules({ prefixVelocity: { digits: 4, max: 2, window: 10 * MINUTE } });
    expect((await send('2348035000003', enforced, T0 + 2)).reason).toBe('prefix_velocity');
  });

  it('refuses a malformed attempt before any SQL', async () => {
    const guard = rules({});
    await expect(send('12', guard, T0)).rejects.toThrow('number must be international digits');
    await expect(
      store.otp.judgeSend({ key: '', session: 's', purpose: 'login', number: '2348031000001', at: T0 }, guard),
    ).rejects.toThrow('key must be a string of 1 to 1000 characters');
    await expect(store.otp.recordVerified('', T0)).rejects.toThrow('session must be a string');
  });
});

describe.each(DIALECTS)('the OTP record on %s', (dialect) => {
  let h: DialectHarness;
  beforeAll(async () => {
    h = await harness(dialect);
  });
  afterAll(() => h?.close());

  it('replays its history to the live decisions with the live rules, and differently with others', async () => {
    const store = await h.open(await h.freshLocation());
    const config = otpGuardConfig({
      prefixVelocity: { digits: 4, max: 4, window: '10m' },
      countryVelocity: { max: 30, window: '1h' },
      conversion: { minRate: 0.3, minSends: 5, coolOff: '1h' },
      countries: { mode: 'block', list: ['KE'] },
      purposes: { signup: { prefixVelocity: { digits: 4, max: 2, window: '10m' } } },
    });
    // Attackers in two prefixes who never verify, people across countries who mostly do, one clock minute apart.
    let seq = 0;
    const live = new Map<string, unknown>();
    for (let i = 0; i < 80; i++) {
      const at = T0 + i * 20_000;
      const attack = i % 3 !== 0;
      const number = attack
        ? `23480${i % 2 ? '41' : '42'}00${String(i).padStart(4, '0')}`
        : ['2348051', '2332411', '2547121', '4479111'][i % 4]! + String(100000 + i);
      const purpose = i % 5 === 0 ? 'signup' : 'login';
      const session = `session-${seq++}`;
      const decision = await store.otp.judgeSend(
        { key: `${session}/1`, session, purpose, number, at },
        config.purposes[purpose] ?? config.rules,
      );
      live.set(session, decision);
      if (!attack && decision.verdict !== 'blocked' && i % 6 !== 0) await store.otp.recordVerified(session, at + 5000);
      if (decision.verdict !== 'blocked') await store.otp.recordCost(`${session}/1`, 35, 'NGN');
    }
    const history = await store.otp.history(T0);
    const replayed = backtest(config, history);
    const bySession = new Map(history.filter((e) => e.kind === 'send').map((e) => [e.session, e.seq]));
    for (const [session, decision] of live)
      expect(replayed.decisions.get(bySession.get(session)!), session).toEqual(decision);
    expect(Object.values(replayed.wouldBlock).reduce((a, b) => a + b, 0)).toBeGreaterThan(20);
    expect(replayed.liveBlockedWouldSend).toBe(0);
    expect(replayed.costSaved).toEqual({});

    // Without the velocity rules, the attack's sends are caught later, by conversion alone.
    const looser = backtest(
      otpGuardConfig({ prefixVelocity: null, conversion: { minRate: 0.3, minSends: 5, coolOff: '1h' } }),
      history,
    );
    expect(looser.wouldBlock.low_conversion).toBeGreaterThan(0);
    expect(looser.liveBlockedWouldSend).toBeGreaterThan(0);
    // Stricter rules would have blocked sends the provider charged for.
    const stricter = backtest(otpGuardConfig({ prefixVelocity: { digits: 4, max: 1, window: '10m' } }), history);
    expect(stricter.costSaved.NGN).toBeGreaterThan(0);
    expect(stricter.verifiedSessionsBlocked).toBeGreaterThan(0);
  });

  it('seals numbers with a key ring, forgets an erased number, and purges old events', async () => {
    const location = await h.freshLocation();
    const encryption = { ring: parseKeyRing(generateKey()), lookupKey: Buffer.alloc(32, 7) };
    const store = await h.open(location, { encryption });
    const guard = rules({});
    const dayAgo = Date.now() - 86_400_000;
    await store.otp.judgeSend(
      { key: 'a/1', session: 'a', purpose: 'login', number: '2348036000001', at: dayAgo },
      guard,
    );
    await store.otp.judgeSend(
      { key: 'b/1', session: 'b', purpose: 'login', number: '2348036000002', at: Date.now() },
      guard,
    );
    expect((await store.otp.history(0)).map((e) => e.number)).toEqual(['2348036000001', '2348036000002']);
    // Without the key, the sealed numbers cannot be read.
    const keyless = await h.open(location);
    await expect(keyless.otp.history(0)).rejects.toThrow('the store holds encrypted data');

    await store.eraseNumber('+2348036000001');
    expect((await store.otp.history(0)).map((e) => e.number)).toEqual([null, '2348036000002']);
    expect((await store.purge({ olderThan: new Date(dayAgo + 1) })).otpEvents).toBe(1);
    expect(await store.otp.history(0)).toHaveLength(1);
  });

  it("links each send to its text's or call's final state: conversion per channel", async () => {
    const store = await h.open(await h.freshLocation());
    const guard = rules({});
    const at = Date.now();
    const judged = (key: string, session: string, channel: 'sms' | 'voice') =>
      store.otp.judgeSend({ key, session, purpose: 'login', number: '2348037000001', at, channel }, guard);
    // Session a: its text delivered (webhook), its call unanswered (polled), then verified.
    await judged('a/send-1', 'a', 'sms');
    await store.otp.recordCost('a/send-1', 5, 'NGN', 'msg_a');
    await store.recordEvents([{ providerMessageId: 'msg_a', status: 'delivered', timestamp: '2026-01-01T00:00:00Z' }]);
    await judged('a/voice', 'a', 'voice');
    await store.otp.recordCost('a/voice', 12, 'NGN', 'call_a');
    await store.recordProviderFinal({
      providerMessageId: 'call_a',
      status: 'no_answer',
      timestamp: '2026-01-01T00:01:00Z',
    });
    await store.otp.recordVerified('a', at);
    // Session b: its text's final state not known yet; never verified.
    await judged('b/send-1', 'b', 'sms');
    await store.otp.recordCost('b/send-1', 5, 'NGN', 'msg_b');

    const history = await store.otp.history(0);
    expect(history.filter((e) => e.kind === 'send').map((e) => [e.channel, e.deliveryStatus])).toEqual([
      ['sms', 'delivered'],
      ['voice', 'no_answer'],
      ['sms', null],
    ]);
    expect(channelConversion(history)).toEqual([
      { channel: 'sms', sent: 2, reached: 1, sessions: 2, verifiedSessions: 1 },
      { channel: 'voice', sent: 1, reached: 0, sessions: 1, verifiedSessions: 1 },
    ]);
  });
});
