/**
 * The OTP fraud guard without a store: the rules file's validation and defaults, the judgement of one send
 * (each rule, its order, its wait), the place of a number, and the report per country and prefix.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OTP_GUARD_RULES,
  describeRules,
  NO_OTP_GUARD_RULES,
  type OtpGuardRules,
  otpGuardConfig,
  rulesOfPurpose,
} from '../../src/api/otp-guard.js';
import { judgeSend, placeOf, type RecentSends, windowsOf } from '../../src/store/otp-guard.js';
import { channelConversion, guardReport, type RecordedOtpEvent } from '../../src/store/otp-guard-replay.js';

const MINUTE = 60_000;
const rules = (overrides: Partial<OtpGuardRules>): OtpGuardRules => ({ ...NO_OTP_GUARD_RULES, ...overrides });
const quiet: RecentSends = { prefix: null, country: null, conversion: null };

describe('the rules file', () => {
  it('fills in the defaults, switches a rule off with null, and lets a purpose change rules', () => {
    const config = otpGuardConfig({
      conversion: null,
      allow: ['+2348012345678'],
      purposes: { signup: { prefixVelocity: { digits: 3, max: 2, window: '5m' } } },
    });
    expect(config.rules).toEqual({ ...DEFAULT_OTP_GUARD_RULES, conversion: null, allow: ['2348012345678'] });
    expect(rulesOfPurpose(config, 'signup').prefixVelocity).toEqual({ digits: 3, max: 2, window: 5 * MINUTE });
    expect(rulesOfPurpose(config, 'signup').allow).toEqual(['2348012345678']);
    expect(rulesOfPurpose(config, 'login')).toBe(config.rules);
    expect(otpGuardConfig(undefined).rules).toEqual(DEFAULT_OTP_GUARD_RULES);
  });

  it('names each rule that is wrong', () => {
    expect(() =>
      otpGuardConfig({
        countries: { mode: 'allow', list: ['ng'] },
        prefixVelocity: { digits: 4, max: 0, window: '1x' },
      }),
    ).toThrow(
      /countries\.list\.0: must be an ISO 3166-1 alpha-2 code.*prefixVelocity\.max: .*prefixVelocity\.window: .*unknown unit/,
    );
    expect(() => otpGuardConfig({ velocity: 3 })).toThrow(/\(file\): Unrecognized key: "velocity"/);
    expect(() => otpGuardConfig({ purposes: { Login: {} } })).toThrow(/purposes\.Login/);
    expect(() => otpGuardConfig({ deny: ['123'] })).toThrow(/deny\.0/);
  });

  it('describes each rule in a line', () => {
    expect(describeRules(DEFAULT_OTP_GUARD_RULES)).toEqual([
      'mode: enforce',
      'countries: any',
      'prefix velocity: 10 per 10m, prefix = all but the last 4 digits',
      'country velocity: off',
      'conversion: at least 0.2 verified after 5 sends, over 1h',
      'allow list: 0 numbers, deny list: 0 numbers',
    ]);
    expect(
      describeRules(
        rules({ monitor: true, countries: { mode: 'block', list: [] }, countryVelocity: { max: 3, window: MINUTE } }),
      ),
    ).toEqual([
      'mode: monitor (nothing blocked)',
      'countries: block (none)',
      'prefix velocity: off',
      'country velocity: 3 per 1m',
      'conversion: off',
      'allow list: 0 numbers, deny list: 0 numbers',
    ]);
  });
});

describe('judging one send', () => {
  const at = 1_000_000_000;
  const send = { number: '2348031234567', at };
  const place = placeOf(send.number, DEFAULT_OTP_GUARD_RULES);

  it('places a number by its country and its digits but the last four (or as many as the rules say)', () => {
    expect(place).toEqual({ country: 'NG', prefix: '234803123' });
    expect(placeOf('2348031234567', rules({ prefixVelocity: { digits: 6, max: 1, window: MINUTE } })).prefix).toBe(
      '2348031',
    );
    expect(placeOf('15550001234', DEFAULT_OTP_GUARD_RULES).country).toBe('ZZ');
  });

  it('counts each window back from the send, only for the rules that are on', () => {
    expect(windowsOf(DEFAULT_OTP_GUARD_RULES, at)).toEqual({
      prefixSince: at - 10 * MINUTE,
      countrySince: null,
      conversionSince: at - 60 * MINUTE,
    });
    expect(windowsOf(rules({ countryVelocity: { max: 1, window: MINUTE } }), at)).toEqual({
      prefixSince: null,
      countrySince: at - MINUTE,
      conversionSince: null,
    });
  });

  it('lets a send through below every limit, and blocks it at each limit', () => {
    const velocity = rules({ prefixVelocity: { digits: 4, max: 3, window: 10 * MINUTE } });
    const below = { ...quiet, prefix: { count: 2, oldestAt: at - MINUTE } };
    expect(judgeSend(velocity, send, place, below)).toEqual({ verdict: 'sent', reason: null, retryAfterSeconds: null });
    expect(judgeSend(velocity, send, place, { ...quiet, prefix: { count: 3, oldestAt: at - MINUTE } })).toEqual({
      verdict: 'blocked',
      reason: 'prefix_velocity',
      retryAfterSeconds: 9 * 60,
    });
    const country = rules({ countryVelocity: { max: 3, window: 10 * MINUTE } });
    expect(judgeSend(country, send, place, { ...quiet, country: { count: 3, oldestAt: at - 1500 } })).toEqual({
      verdict: 'blocked',
      reason: 'country_velocity',
      retryAfterSeconds: 599,
    });
    expect(judgeSend(country, send, place, { ...quiet, country: { count: 2, oldestAt: at } }).verdict).toBe('sent');
  });

  it('judges conversion only once a prefix has had its minimum of sends, and at its minimum rate', () => {
    const conversion = rules({ conversion: { minRate: 0.5, minSends: 4, coolOff: 60 * MINUTE } });
    const recent = (count: number, verified: number) => ({ ...quiet, conversion: { count, verified, oldestAt: at } });
    expect(judgeSend(conversion, send, place, recent(3, 0)).verdict).toBe('sent');
    expect(judgeSend(conversion, send, place, recent(4, 1))).toEqual({
      verdict: 'blocked',
      reason: 'low_conversion',
      retryAfterSeconds: 3600,
    });
    expect(judgeSend(conversion, send, place, recent(4, 2)).verdict).toBe('sent');
  });

  it('waits at least a second, and the full window when the oldest send is not known', () => {
    const velocity = rules({ prefixVelocity: { digits: 4, max: 1, window: 10 * MINUTE } });
    const at0 = (oldestAt: number | null) =>
      judgeSend(velocity, send, place, { ...quiet, prefix: { count: 1, oldestAt } });
    expect(at0(at - 10 * MINUTE + 1).retryAfterSeconds).toBe(1);
    expect(at0(null).retryAfterSeconds).toBe(600);
  });

  it('checks the deny list first, then countries, and lets the allow list pass everything', () => {
    const strict = rules({
      countries: { mode: 'allow', list: ['GH'] },
      prefixVelocity: { digits: 4, max: 1, window: MINUTE },
      deny: [send.number],
    });
    const busy = { ...quiet, prefix: { count: 5, oldestAt: at } };
    expect(judgeSend(strict, send, place, busy).reason).toBe('deny_list');
    expect(judgeSend({ ...strict, deny: [] }, send, place, busy).reason).toBe('country_not_allowed');
    expect(judgeSend({ ...strict, countries: null, deny: [] }, send, place, busy).reason).toBe('prefix_velocity');
    expect(judgeSend({ ...strict, allow: [send.number] }, send, place, busy).verdict).toBe('sent');
    expect(judgeSend(rules({ countries: { mode: 'block', list: ['NG'] } }), send, place, quiet).reason).toBe(
      'country_not_allowed',
    );
    expect(judgeSend(rules({ countries: { mode: 'block', list: ['GH'] } }), send, place, quiet).verdict).toBe('sent');
  });

  it('in monitor mode, flags what it would block', () => {
    const watch = rules({ monitor: true, deny: [send.number] });
    expect(judgeSend(watch, send, place, quiet)).toEqual({
      verdict: 'monitored',
      reason: 'deny_list',
      retryAfterSeconds: null,
    });
  });
});

describe('the report per country and prefix', () => {
  let seq = 0;
  const sendEvent = (
    number: string,
    session: string,
    verdict: RecordedOtpEvent['verdict'],
    reason: RecordedOtpEvent['reason'] = null,
  ): RecordedOtpEvent => ({
    seq: ++seq,
    kind: 'send',
    session,
    purpose: 'login',
    number,
    at: seq,
    verdict,
    reason,
    cost: null,
    currency: null,
  });
  const verified = (session: string): RecordedOtpEvent => ({
    ...sendEvent('', session, null),
    kind: 'verify',
    purpose: null,
    number: null,
  });

  it('counts attempts, sends, sessions, verified sessions, blocks and flags, busiest first', () => {
    const events = [
      sendEvent('233241000001', 'g1', 'sent'),
      sendEvent('2348031000001', 'n1', 'sent'),
      sendEvent('2348031000002', 'n2', 'monitored', 'prefix_velocity'),
      sendEvent('2348031000003', 'n3', 'blocked', 'low_conversion'),
      sendEvent('2348031000001', 'n1', 'sent'),
      verified('n1'),
      verified('g9'),
      { ...sendEvent('2348031000004', 'erased', 'sent'), number: null },
    ];
    expect(guardReport(otpGuardConfig({}), events)).toEqual([
      {
        country: 'NG',
        prefix: '234803100',
        attempts: 4,
        sent: 3,
        sessions: 2,
        verifiedSessions: 1,
        blocked: { low_conversion: 1 },
        flagged: { prefix_velocity: 1 },
      },
      {
        country: 'GH',
        prefix: '23324100',
        attempts: 1,
        sent: 1,
        sessions: 1,
        verifiedSessions: 0,
        blocked: {},
        flagged: {},
      },
    ]);
  });

  it('conversion per channel: sends that reached the provider, those that reached the person, verified sessions', () => {
    const on = (
      channel: 'sms' | 'voice',
      session: string,
      deliveryStatus: string | null,
      verdict = 'sent' as const,
    ) => ({
      ...sendEvent('2348031000001', session, verdict),
      channel,
      deliveryStatus,
    });
    const events: RecordedOtpEvent[] = [
      on('sms', 'a', 'undelivered'),
      on('voice', 'a', 'completed'),
      verified('a'),
      on('sms', 'b', 'delivered'),
      on('sms', 'c', null),
      { ...on('sms', 'd', null), verdict: 'blocked', reason: 'low_conversion' },
      { ...sendEvent('2348031000002', 'e', 'sent'), channel: null },
      on('voice', 'f', 'no_answer'),
    ];
    expect(channelConversion(events)).toEqual([
      { channel: 'sms', sent: 3, reached: 1, sessions: 3, verifiedSessions: 1 },
      { channel: 'voice', sent: 2, reached: 1, sessions: 2, verifiedSessions: 1 },
    ]);
    expect(channelConversion([])).toEqual([]);
  });

  it('orders equally busy rows by country, then prefix', () => {
    const events = [
      sendEvent('2348032000001', 'a', 'sent'),
      sendEvent('254710000001', 'b', 'sent'),
      sendEvent('5511900004321', 'c', 'sent'),
      sendEvent('2348031000001', 'd', 'sent'),
    ];
    expect(guardReport(otpGuardConfig({}), events).map((r) => `${r.country} ${r.prefix}`)).toEqual([
      'BR 551190000',
      'KE 25471000',
      'NG 234803100',
      'NG 234803200',
    ]);
  });
});
