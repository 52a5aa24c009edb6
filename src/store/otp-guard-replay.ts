/**
 * The OTP guard over a recorded history, in memory: the backtest (what a candidate rule set would have
 * blocked) and the report (sends, verifications and blocks per country and prefix). The backtest counts the
 * same windows as the live guard's SQL and judges with the same `judgeSend`: replaying the live rules gives
 * the live decisions.
 */
import { type OtpBlockReason, type OtpGuardConfig, rulesOfPurpose } from '../api/otp-guard.js';
import {
  judgeSend,
  type OtpGuardDecision,
  type OtpGuardVerdict,
  placeOf,
  type RecentSends,
  type WindowCount,
  windowsOf,
} from './otp-guard.js';

/** One recorded OTP event, in the order the store recorded it (`seq`). */
export interface RecordedOtpEvent {
  seq: number;
  /** `send`: the guard judged a send; `verify`: the session's code was verified. */
  kind: 'send' | 'verify';
  session: string;
  /** Sends only: what the live guard said, and the numbers in clear (null once the number was erased). */
  purpose: string | null;
  number: string | null;
  at: number;
  verdict: OtpGuardVerdict | null;
  reason: OtpBlockReason | null;
  /** What the provider charged for the send (minor units), when it took it. */
  cost: number | null;
  currency: string | null;
  /** Sends: a text or a call (null: not known). */
  channel?: 'sms' | 'voice' | null;
  /** Sends: the text's or the call's final state in the message store (null: none known). */
  deliveryStatus?: string | null;
}

interface Sent {
  at: number;
  session: string;
}

/** Sends that reached the provider, per prefix and per country, sorted by time; and the verified sessions. */
export class GuardReplay {
  private readonly byPrefix = new Map<string, Sent[]>();
  private readonly byCountry = new Map<string, Sent[]>();
  private readonly verifiedSessions = new Set<string>();

  constructor(private readonly config: OtpGuardConfig) {}

  /** Judges a send as the live guard would have at `at`, and counts it when it would have gone. */
  judge(send: { purpose: string; number: string; session: string; at: number }): OtpGuardDecision {
    const rules = rulesOfPurpose(this.config, send.purpose);
    const place = placeOf(send.number, rules);
    const windows = windowsOf(rules, send.at);
    const prefixSends = this.byPrefix.get(place.prefix) ?? [];
    const recent: RecentSends = {
      prefix: windows.prefixSince === null ? null : countSince(prefixSends, windows.prefixSince),
      country:
        windows.countrySince === null
          ? null
          : countSince(this.byCountry.get(place.country) ?? [], windows.countrySince),
      conversion: windows.conversionSince === null ? null : this.conversionSince(prefixSends, windows.conversionSince),
    };
    const decision = judgeSend(rules, send, place, recent);
    if (decision.verdict !== 'blocked') {
      const sent = { at: send.at, session: send.session };
      insertByTime(this.byPrefix, place.prefix, sent);
      insertByTime(this.byCountry, place.country, sent);
    }
    return decision;
  }

  verified(session: string): void {
    this.verifiedSessions.add(session);
  }

  private conversionSince(sends: readonly Sent[], since: number): WindowCount & { verified: number } {
    const inWindow = sends.slice(firstAfter(sends, since));
    return {
      count: inWindow.length,
      oldestAt: inWindow[0]?.at ?? null,
      verified: inWindow.filter((sent) => this.verifiedSessions.has(sent.session)).length,
    };
  }
}

/** Index of the first send made after `since` (the list is sorted by time). */
function firstAfter(sends: readonly Sent[], since: number): number {
  let low = 0;
  let high = sends.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sends[middle]!.at > since) high = middle;
    else low = middle + 1;
  }
  return low;
}

function countSince(sends: readonly Sent[], since: number): WindowCount {
  const first = firstAfter(sends, since);
  return { count: sends.length - first, oldestAt: sends[first]?.at ?? null };
}

function insertByTime(lists: Map<string, Sent[]>, key: string, sent: Sent): void {
  const list = lists.get(key) ?? [];
  // After every send made at or before it: almost always at the end.
  list.splice(firstAfter(list, sent.at), 0, sent);
  lists.set(key, list);
}

export interface BacktestResult {
  /** Sends in the history that could be judged (those whose number was erased cannot). */
  sends: number;
  /** Sends the candidate rules would have kept from the provider, by reason. */
  wouldBlock: Partial<Record<OtpBlockReason, number>>;
  /** Sends the candidate rules would only have flagged (monitor mode), by reason. */
  wouldFlag: Partial<Record<OtpBlockReason, number>>;
  /** Of the sessions it would have blocked a send of, those whose code was verified: logins it would have cost. */
  verifiedSessionsBlocked: number;
  /** What the provider charged for the sends it would have blocked, per currency (minor units). */
  costSaved: Record<string, number>;
  /** Sends the live guard blocked that these rules would have let through (no outcome is known for them). */
  liveBlockedWouldSend: number;
  /** The candidate's decision on each judged send, by the event's `seq`. */
  decisions: Map<number, OtpGuardDecision>;
}

/** Replays `events` (in `seq` order) against `config`. */
export function backtest(config: OtpGuardConfig, events: readonly RecordedOtpEvent[]): BacktestResult {
  const replay = new GuardReplay(config);
  const verifiedSessions = new Set(events.filter((e) => e.kind === 'verify').map((e) => e.session));
  const blockedSessions = new Set<string>();
  const result: BacktestResult = {
    sends: 0,
    wouldBlock: {},
    wouldFlag: {},
    verifiedSessionsBlocked: 0,
    costSaved: {},
    liveBlockedWouldSend: 0,
    decisions: new Map(),
  };
  for (const event of events) {
    if (event.kind === 'verify') {
      replay.verified(event.session);
      continue;
    }
    if (event.number === null || event.purpose === null) continue;
    result.sends += 1;
    const decision = replay.judge({ ...event, number: event.number, purpose: event.purpose });
    result.decisions.set(event.seq, decision);
    if (decision.verdict === 'monitored') increment(result.wouldFlag, decision.reason!);
    if (decision.verdict === 'blocked') {
      increment(result.wouldBlock, decision.reason!);
      blockedSessions.add(event.session);
      if (event.cost !== null && event.currency !== null) increment(result.costSaved, event.currency, event.cost);
    } else if (event.verdict === 'blocked') result.liveBlockedWouldSend += 1;
  }
  result.verifiedSessionsBlocked = [...blockedSessions].filter((s) => verifiedSessions.has(s)).length;
  return result;
}

/** One row of `msgflow otp guard report`. */
export interface GuardReportRow {
  country: string;
  prefix: string;
  /** Sends judged, whatever the decision. */
  attempts: number;
  /** Sends that reached the provider. */
  sent: number;
  /** Sessions of those sends whose code was verified. */
  verifiedSessions: number;
  /** Sessions with a send that reached the provider. */
  sessions: number;
  blocked: Partial<Record<OtpBlockReason, number>>;
  flagged: Partial<Record<OtpBlockReason, number>>;
}

/** Per country and prefix (the prefix as `config`'s rules cut it), busiest first. */
export function guardReport(config: OtpGuardConfig, events: readonly RecordedOtpEvent[]): GuardReportRow[] {
  const verified = new Set(events.filter((e) => e.kind === 'verify').map((e) => e.session));
  const rows = new Map<string, GuardReportRow & { sentSessions: Set<string> }>();
  for (const event of events) {
    if (event.kind !== 'send' || event.number === null || event.purpose === null) continue;
    const place = placeOf(event.number, rulesOfPurpose(config, event.purpose));
    const key = `${place.country} ${place.prefix}`;
    const row = rows.get(key) ?? {
      ...place,
      attempts: 0,
      sent: 0,
      verifiedSessions: 0,
      sessions: 0,
      blocked: {},
      flagged: {},
      sentSessions: new Set<string>(),
    };
    row.attempts += 1;
    if (event.verdict === 'blocked') increment(row.blocked, event.reason!);
    else {
      row.sent += 1;
      row.sentSessions.add(event.session);
      if (event.verdict === 'monitored') increment(row.flagged, event.reason!);
    }
    rows.set(key, row);
  }
  return [...rows.values()]
    .map(({ sentSessions, ...row }) => ({
      ...row,
      sessions: sentSessions.size,
      verifiedSessions: [...sentSessions].filter((s) => verified.has(s)).length,
    }))
    .sort((a, b) => b.attempts - a.attempts || a.country.localeCompare(b.country) || a.prefix.localeCompare(b.prefix));
}

/** One row of `msgflow otp guard report --by channel`. */
export interface ChannelConversionRow {
  channel: 'sms' | 'voice';
  /** Sends on this channel that reached the provider. */
  sent: number;
  /** Of those, the ones whose final state says the code got there: a text `delivered`, a call `completed`. */
  reached: number;
  /** Sessions with a send on this channel. */
  sessions: number;
  /** Of those, the sessions whose code was verified. */
  verifiedSessions: number;
}

const REACHED = new Set(['delivered', 'completed']);

/** Per channel (texts, then calls): sends, how many reached the person, and the sessions' conversion. */
export function channelConversion(events: readonly RecordedOtpEvent[]): ChannelConversionRow[] {
  const verified = new Set(events.filter((e) => e.kind === 'verify').map((e) => e.session));
  const rows = new Map<'sms' | 'voice', ChannelConversionRow & { sentSessions: Set<string> }>();
  for (const event of events) {
    if (event.kind !== 'send' || !event.channel || event.verdict === 'blocked') continue;
    const row = rows.get(event.channel) ?? {
      channel: event.channel,
      sent: 0,
      reached: 0,
      sessions: 0,
      verifiedSessions: 0,
      sentSessions: new Set<string>(),
    };
    row.sent += 1;
    if (event.deliveryStatus && REACHED.has(event.deliveryStatus)) row.reached += 1;
    row.sentSessions.add(event.session);
    rows.set(event.channel, row);
  }
  return (['sms', 'voice'] as const).flatMap((channel) => {
    const row = rows.get(channel);
    if (!row) return [];
    const { sentSessions, ...counts } = row;
    const sessions = [...sentSessions];
    return [{ ...counts, sessions: sessions.length, verifiedSessions: sessions.filter((s) => verified.has(s)).length }];
  });
}

function increment<K extends string>(counts: Partial<Record<K, number>>, key: K, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}
