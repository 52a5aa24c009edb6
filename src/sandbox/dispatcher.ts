/**
 * Webhook dispatcher: sends due deliveries from the outbox, each signed with signWebhook (Standard
 * Webhooks). The `webhook-id` is the delivery's id, the same on every retry, so receivers can dedupe.
 * A non-2xx answer, a timeout or a connection error schedules the next attempt from the retry schedule
 * (or later, when a 429/503 carries a longer Retry-After); when the schedule runs out the delivery is
 * marked failed. State lives in the database, so pending deliveries survive a restart.
 *
 * Every attempt is written to `delivery_attempts` (time, HTTP status or error, latency, the start of the
 * receiver's answer) for the console and the admin API. Deliveries of an account whose webhooks are paused
 * wait, due, until they are resumed. During a secret rotation both the new and the previous secret sign.
 *
 * Shaped for fault injection: `plan()` decides how each attempt goes out (delay, duplicate, a contradicting
 * receipt after it), so chaos options slot in without touching the send/retry logic.
 */
import { signWebhook } from '../api/signature.js';
import type { Db } from './db.js';
import type { WebhookTiming } from './options.js';
import { collectBatches, enqueueContradiction } from './webhook-outbox.js';
import { sleep } from '../sleep.js';

interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  body: string;
  attempts: number;
  url: string | null;
  secret: string | null;
  previous_secret: string | null;
  previous_secret_until: number | null;
  deleted_at: number | null;
}

/** How much of a receiver's answer is kept per attempt: enough to read an error message. */
export const RESPONSE_START_BYTES = 512;

interface AttemptPlan {
  extraDelayMs: number;
  duplicate: boolean;
  contradict: boolean;
}

interface AttemptTiming {
  startedAt: number;
  latencyMs: number;
  responseStart: string | null;
}

type AttemptResult = AttemptTiming &
  ({ ok: true; status: number } | { ok: false; status: number | null; error: string; retryAfterMs: number | null });

export class WebhookDispatcher {
  /** Deliveries being attempted, by `seq`. */
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly abort = new AbortController();
  /** Contradicting receipts this dispatcher made (chaos): never contradicted in turn. */
  private readonly contradictions = new Set<string>();
  /**
   * Deliveries drawn to be contradicted whose attempt failed (chaos): contradicted once they get through, so a
   * receiver that is down while contradicting is on still meets the contradictions after it is back.
   */
  private readonly owedContradictions = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly timing: WebhookTiming,
    private readonly now: () => number,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Gathers waiting batch items into deliveries, then starts what is due. Runs on each tick of the clock. */
  tick(): void {
    if (this.abort.signal.aborted) return;
    collectBatches(this.db, this.timing.batchMax, this.now());
    this.startDue();
  }

  /**
   * Starts every due delivery not already in flight, up to the concurrency limit. The due ones are picked by
   * `seq` alone (the index holds it) and only those started are read whole: this runs each time a delivery
   * finishes, and reading every in-flight body again each time made the cost grow with the concurrency.
   */
  private startDue(): void {
    const room = this.timing.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const due = this.db
      .prepare(
        `SELECT d.seq FROM deliveries d LEFT JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= ?
            AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = w.account_id AND a.webhooks_paused = 1)
          ORDER BY d.next_attempt_at, d.seq LIMIT ?`,
      )
      .all(this.now(), room + this.inFlight.size) as { seq: number }[];
    const read = this.db.prepare(
      `SELECT d.seq, d.id, d.webhook_id, d.body, d.attempts, w.url, w.secret, w.previous_secret,
              w.previous_secret_until, w.deleted_at
         FROM deliveries d LEFT JOIN webhooks w ON w.id = d.webhook_id WHERE d.seq = ?`,
    );
    for (const { seq } of due) {
      if (this.inFlight.size >= this.timing.concurrency) break;
      if (this.inFlight.has(seq)) continue;
      const delivery = read.get(seq) as DeliveryRow;
      if (!delivery.url || !delivery.secret || delivery.deleted_at !== null) {
        this.db
          .prepare("UPDATE deliveries SET state = 'cancelled', updated_at = ? WHERE id = ?")
          .run(this.now(), delivery.id);
        continue;
      }
      const running = this.deliver(delivery).finally(() => {
        this.inFlight.delete(seq);
        this.refill();
      });
      this.inFlight.set(seq, running);
    }
  }

  /** Starts the next due delivery at once rather than on the next tick, so the receiver sets the pace. */
  private refill(): void {
    if (this.abort.signal.aborted) return;
    try {
      this.startDue();
    } catch (error) {
      this.log(`sandbox: webhook dispatcher error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Stops new attempts, aborts those in flight (they stay pending in the database) and waits for them. */
  async close(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private plan(delivery: DeliveryRow): AttemptPlan {
    const chaos = this.timing.chaos;
    if (!chaos) return { extraDelayMs: 0, duplicate: false, contradict: false };
    const random = chaos.random ?? Math.random;
    const extraDelayMs =
      delivery.attempts === 0 && chaos.maxExtraDelayMs ? Math.floor(random() * chaos.maxExtraDelayMs) : 0;
    const duplicate = chaos.duplicateProbability !== undefined && random() < chaos.duplicateProbability;
    const drawnToContradict =
      chaos.contradictProbability !== undefined &&
      !this.contradictions.has(delivery.id) &&
      random() < chaos.contradictProbability;
    return { extraDelayMs, duplicate, contradict: drawnToContradict || this.owedContradictions.has(delivery.id) };
  }

  private async deliver(delivery: DeliveryRow): Promise<void> {
    const plan = this.plan(delivery);
    if (plan.extraDelayMs > 0) await pause(plan.extraDelayMs, this.abort.signal);
    if (this.abort.signal.aborted) return;
    const result = await this.attempt(delivery);
    if (this.abort.signal.aborted && !result.ok) return; // shutting down: leave it pending for the next start
    this.record(delivery, result);
    if (!result.ok) {
      if (plan.contradict) this.owedContradictions.add(delivery.id);
    } else {
      this.contradictions.delete(delivery.id);
      this.owedContradictions.delete(delivery.id);
      if (plan.contradict)
        this.contradictions.add(enqueueContradiction(this.db, delivery.webhook_id, delivery.body, this.now()));
    }
    if (result.ok && plan.duplicate && !this.abort.signal.aborted) await this.attempt(delivery);
  }

  private async attempt(delivery: DeliveryRow): Promise<AttemptResult> {
    const startedAt = this.now();
    const secrets = [delivery.secret!];
    if (delivery.previous_secret && (delivery.previous_secret_until ?? 0) > startedAt)
      secrets.push(delivery.previous_secret);
    const headers = signWebhook(secrets, delivery.id, Math.floor(startedAt / 1000), delivery.body);
    const started = performance.now();
    const timing = (responseStart: string | null): AttemptTiming => ({
      startedAt,
      latencyMs: Math.round(performance.now() - started),
      responseStart,
    });
    try {
      const response = await fetch(delivery.url!, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'msgflow-sandbox-webhooks/1' },
        body: delivery.body,
        redirect: 'manual',
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.timing.timeoutMs)]),
      });
      const answered = timing(await readStart(response));
      if (response.status >= 200 && response.status < 300) return { ...answered, ok: true, status: response.status };
      return {
        ...answered,
        ok: false,
        status: response.status,
        error: `HTTP ${response.status}`,
        retryAfterMs:
          response.status === 429 || response.status === 503
            ? retryAfterMs(response.headers.get('retry-after'), this.now())
            : null,
      };
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      const message =
        name === 'TimeoutError' ? `timed out after ${this.timing.timeoutMs} ms` : describeNetworkError(error);
      return { ...timing(null), ok: false, status: null, error: message, retryAfterMs: null };
    }
  }

  /** The attempt's row and the delivery's new state commit together, so a crash cannot count an attempt twice. */
  private record(delivery: DeliveryRow, result: AttemptResult): void {
    this.db.transaction(() => this.recordAttempt(delivery, result))();
  }

  private recordAttempt(delivery: DeliveryRow, result: AttemptResult): void {
    const attempts = delivery.attempts + 1;
    const now = this.now();
    this.db
      .prepare(
        'INSERT INTO delivery_attempts (delivery_id, attempt, started_at, latency_ms, status, error, response_start) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        delivery.id,
        attempts,
        result.startedAt,
        result.latencyMs,
        result.status,
        result.ok ? null : result.error,
        result.responseStart,
      );
    if (result.ok) {
      this.db
        .prepare(
          "UPDATE deliveries SET state = 'delivered', attempts = ?, last_status = ?, last_error = NULL, updated_at = ? WHERE id = ?",
        )
        .run(attempts, result.status, now, delivery.id);
      return;
    }
    const scheduled = this.timing.retryScheduleMs[attempts - 1];
    // Only the endpoint's origin is logged: paths and queries may carry secrets.
    const webhook = `webhook ${delivery.id} to ${originOf(delivery.url!)}`;
    const where = `${webhook} failed (${result.error}) on attempt ${attempts}`;
    this.log(scheduled === undefined ? `sandbox: ${where}; giving up` : `sandbox: ${where}; retrying`);
    if (scheduled === undefined) {
      this.db
        .prepare(
          "UPDATE deliveries SET state = 'failed', attempts = ?, last_status = ?, last_error = ?, updated_at = ? WHERE id = ?",
        )
        .run(attempts, result.status, result.error, now, delivery.id);
      return;
    }
    const delay = Math.max(scheduled, result.retryAfterMs ?? 0);
    this.db
      .prepare(
        'UPDATE deliveries SET attempts = ?, next_attempt_at = ?, last_status = ?, last_error = ?, updated_at = ? WHERE id = ?',
      )
      .run(attempts, now + delay, result.status, result.error, now, delivery.id);
  }
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The first RESPONSE_START_BYTES of the answer's body (as text), then the rest is dropped unread. */
async function readStart(response: Response): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_START_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut short still leaves what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).subarray(0, RESPONSE_START_BYTES).toString('utf8');
  return text === '' ? null : text;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid url)';
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : 'network error');
}

/** Waits `ms`, or until `signal` aborts: either way the caller goes on (and checks the signal itself). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => undefined);
}
