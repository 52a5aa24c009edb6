/**
 * The simulated carrier. Each SMS moves queued → sent → one final state; each voice call moves
 * queued → ringing → in_progress → completed (or stops at busy, no_answer or failed). The outcome is
 * chosen at send time from documented magic numbers, and every pending move is a `transitions` row with a
 * due time, applied by a timer loop: a restart loses nothing, it just carries on from the database.
 */
import { eventKindOf, type FinalStatus, type MessageStatus } from '../api/events.js';
import type { VoiceStatus } from '../api/voice.js';
import type { Db } from './db.js';
import type { CarrierTiming } from './options.js';
import { timestampOf } from './time.js';
import { enqueueStatusEvent } from './webhook-outbox.js';

/**
 * Recipient numbers (digits only, as sends take them) whose SMS ends in a chosen state. Every other valid
 * number is delivered. `neverFinal` stays `sent` forever (a carrier that never reports back).
 */
export const MAGIC_NUMBERS = {
  delivered: '12025550100',
  undelivered: '12025550101',
  failed: '12025550102',
  rejected: '12025550103',
  expired: '12025550104',
  neverFinal: '12025550105',
} as const;

/** Voice call recipients with a chosen outcome; every other valid number answers and the call completes. */
export const VOICE_MAGIC_NUMBERS = {
  completed: '12025550200',
  busy: '12025550201',
  no_answer: '12025550202',
  failed: '12025550203',
} as const;

/** What a message will end as; `none` never reaches a final state. */
export type MessageOutcome = FinalStatus | 'none';
export type VoiceOutcome = 'completed' | 'busy' | 'no_answer' | 'failed';

export function messageOutcomeFor(digits: string): MessageOutcome {
  switch (digits) {
    case MAGIC_NUMBERS.undelivered:
      return 'undelivered';
    case MAGIC_NUMBERS.failed:
      return 'failed';
    case MAGIC_NUMBERS.rejected:
      return 'rejected';
    case MAGIC_NUMBERS.expired:
      return 'expired';
    case MAGIC_NUMBERS.neverFinal:
      return 'none';
    default:
      return 'delivered';
  }
}

export function voiceOutcomeFor(digits: string): VoiceOutcome {
  switch (digits) {
    case VOICE_MAGIC_NUMBERS.busy:
      return 'busy';
    case VOICE_MAGIC_NUMBERS.no_answer:
      return 'no_answer';
    case VOICE_MAGIC_NUMBERS.failed:
      return 'failed';
    default:
      return 'completed';
  }
}

/** Length of a completed call: text-to-speech at about 2.5 words a second, times the repeats. */
export function callDurationSeconds(message: string, repeat: number): number {
  const words = message.trim().split(/\s+/).filter(Boolean).length;
  return Math.max(1, Math.ceil(words / 2.5)) * repeat;
}

interface TransitionRow {
  seq: number;
  subject: 'message' | 'voice';
  subject_id: string;
  status: string;
}

export class Carrier {
  constructor(
    private readonly db: Db,
    private readonly timing: CarrierTiming,
    private readonly now: () => number,
  ) {}

  /** Records the first state of a new message or call and schedules its next move (inside the send's transaction). */
  start(subject: 'message' | 'voice', id: string, at: number): void {
    this.recordHistory(id, 'queued', at);
    const first = subject === 'message' ? 'sent' : this.firstVoiceMove(id);
    const delay = subject === 'message' ? this.timing.submitMs : this.timing.voiceStepMs;
    this.schedule(subject, id, first, at + delay);
  }

  /**
   * Applies up to `limit` due moves in one transaction: each move commits together with its follow-up move
   * and its webhook outbox rows, so a crash can neither lose an event nor apply a move twice.
   */
  tick(limit = 1000): number {
    const now = this.now();
    return this.db.transaction(() => {
      const due = this.db
        .prepare(
          'SELECT seq, subject, subject_id, status FROM transitions WHERE due_at <= ? ORDER BY due_at, seq LIMIT ?',
        )
        .all(now, limit) as TransitionRow[];
      for (const t of due) {
        this.db.prepare('DELETE FROM transitions WHERE seq = ?').run(t.seq);
        if (t.subject === 'message') this.moveMessage(t.subject_id, t.status as MessageStatus, now);
        else this.moveCall(t.subject_id, t.status as VoiceStatus, now);
      }
      return due.length;
    })();
  }

  private schedule(subject: 'message' | 'voice', id: string, status: string, dueAt: number): void {
    this.db
      .prepare('INSERT INTO transitions (subject, subject_id, status, due_at) VALUES (?, ?, ?, ?)')
      .run(subject, id, status, dueAt);
  }

  private recordHistory(id: string, status: string, at: number): void {
    this.db.prepare('INSERT INTO status_history (subject_id, status, at) VALUES (?, ?, ?)').run(id, status, at);
  }

  private moveMessage(id: string, status: MessageStatus, now: number): void {
    const message = this.db
      .prepare('SELECT account_id, mobile_number, outcome, final_delay_ms FROM messages WHERE id = ?')
      .get(id) as
      { account_id: string; mobile_number: string; outcome: MessageOutcome; final_delay_ms: number | null } | undefined;
    if (!message) return;
    this.db.prepare('UPDATE messages SET status = ?, updated_at = ? WHERE id = ?').run(status, now, id);
    this.recordHistory(id, status, now);
    if (status === 'sent') {
      if (message.outcome !== 'none')
        this.schedule('message', id, message.outcome, now + (message.final_delay_ms ?? this.timing.finalMs));
      return;
    }
    const final = status as FinalStatus;
    enqueueStatusEvent(
      this.db,
      message.account_id,
      {
        event: eventKindOf(final),
        mobile_number: `+${message.mobile_number}`,
        provider_message_id: id,
        status: final,
        timestamp: timestampOf(now),
      },
      now,
    );
  }

  private firstVoiceMove(id: string): VoiceStatus {
    const row = this.db.prepare('SELECT outcome FROM voice_calls WHERE id = ?').get(id) as
      { outcome: VoiceOutcome } | undefined;
    return row?.outcome === 'failed' ? 'failed' : 'ringing';
  }

  private moveCall(id: string, status: VoiceStatus, now: number): void {
    const call = this.db.prepare('SELECT outcome, message, repeat FROM voice_calls WHERE id = ?').get(id) as
      { outcome: VoiceOutcome; message: string; repeat: number } | undefined;
    if (!call) return;
    const duration = status === 'completed' ? callDurationSeconds(call.message, call.repeat) : 0;
    this.db
      .prepare('UPDATE voice_calls SET status = ?, duration_seconds = ?, updated_at = ? WHERE id = ?')
      .run(status, duration, now, id);
    this.recordHistory(id, status, now);
    const next = nextVoiceStatus(status, call.outcome);
    if (next) this.schedule('voice', id, next, now + this.timing.voiceStepMs);
  }
}

function nextVoiceStatus(current: VoiceStatus, outcome: VoiceOutcome): VoiceStatus | null {
  if (current === 'ringing') return outcome === 'busy' || outcome === 'no_answer' ? outcome : 'in_progress';
  if (current === 'in_progress') return 'completed';
  return null;
}
