/**
 * The message store's contract: which workflows wait for which provider message, and what the provider's
 * status events said about it. Both dialects (SQLite, PostgreSQL) implement `MessageStore` the same way.
 */
import type { KeyRing } from '../crypto/keyring.js';
import type { FinalStatus } from '../api/constants.js';
import type { Migration } from './migrations.js';
import type { OtpGuardRules } from '../api/otp-guard.js';
import type { OtpGuardDecision, OtpSendAttempt } from './otp-guard.js';
import type { RecordedOtpEvent } from './otp-guard-replay.js';

/** A message a sender just got an id for. `number` and `campaignKey` feed per-recipient reports. */
export interface SentMessage {
  providerMessageId: string;
  /** The recipient (E.164); stored encrypted when the store has a key ring. */
  number?: string;
  campaignKey?: string;
  /** The W3C traceparent of the span that sent it, when traced: the ingress links the status event's span to it. */
  traceParent?: string;
}

/** One status event as the ingress received it (already verified and validated). */
export interface StatusEventRecord {
  providerMessageId: string;
  /** A final status, or a non-final one such as `sent`. */
  status: string;
  /** When the provider says the state was reached (ISO 8601, as received). */
  timestamp: string;
  /** The delivery id (`webhook-id`), for tracing. */
  eventId?: string;
}

/** Where a final state came from: a status event the ingress received, or the provider's answer when asked. */
export type FinalSource = 'webhook' | 'provider';

/** The first final state recorded for a message. */
export interface FinalOutcome {
  providerMessageId: string;
  status: FinalStatus;
  timestamp: string;
  eventId: string | null;
  /** `provider` when the final state was asked of the provider; absent when a webhook brought it. */
  source?: 'provider';
}

/** The final state held for a message or a voice call (its status is a voice status then), and its source. */
export interface StoredFinal {
  providerMessageId: string;
  status: string;
  timestamp: string;
  /** The webhook delivery's id; null when the provider was asked. */
  eventId: string | null;
  source: FinalSource;
}

/**
 * A final state learned by asking the provider: a message's (GET /messages/{id} at the end of a wait window)
 * or a voice call's (GET /voice/{id}). See provider-finals.ts for the rule.
 */
export interface ProviderFinalRecord {
  /** The message's provider_message_id, or the call's id. */
  providerMessageId: string;
  /** A final message status, or a final voice status. */
  status: string;
  /** The provider's time of that state (ISO 8601, as received). */
  timestamp: string;
  /** The workflow that asked: its waiter is marked told in the same transaction. */
  workflowId?: string;
  /** The recipient (+E.164), kept for reports and look-ups by number; sealed when the store has a key ring. */
  number?: string;
}

/** What to signal: each waiting workflow with the final outcomes of the messages it waits for. */
export interface WaiterOutcomes {
  workflowId: string;
  outcomes: FinalOutcome[];
  /** The distinct traceparents of those messages' sends; absent when none was traced. */
  traceParents?: string[];
  /**
   * Set by `recordEvents` when every message the workflow waits for is now final: nothing else is pending,
   * so its relay may tell it ahead of the rate rule (once; see `Outbox.claim`).
   */
  allFinal?: true;
}

export interface Waiter {
  workflowId: string;
  /** Milliseconds since the epoch. */
  registeredAt: number;
  releasedAt: number | null;
  /** Since when its final outcome waits to be told to the workflow (the outbox); null when nothing waits. */
  untoldSince: number | null;
  /** When the workflow was told the outcome; null until then. */
  toldAt: number | null;
  /** While the outcome waits because Temporal refused the workflow's signals: how often, why, the next try. */
  refused?: WorkflowRefusal;
}

/** Everything held about one message. Times without a suffix are the provider's; `*At` numbers are ours (ms). */
export interface StoredMessage {
  providerMessageId: string;
  final: StoredFinal | null;
  /** The last non-final status seen, and its event's timestamp. */
  lastStatus: string | null;
  lastStatusTimestamp: string | null;
  number: string | null;
  campaignKey: string | null;
  firstSeenAt: number;
  lastSeenAt: number;
  waiters: Waiter[];
}

export interface ReportQuery {
  campaignKey: string;
  /** Only rows whose current status (the final one, else the last seen) is this. */
  status?: string;
  /** The `next` cursor of the previous page. */
  after?: string;
  /** 1..1000 */
  limit: number;
}

export interface ReportRow {
  providerMessageId: string;
  number: string | null;
  /** The final status, else the last non-final one, else null (sent, nothing heard yet). */
  status: string | null;
  final: boolean;
  /** The provider's timestamp of that status. */
  timestamp: string | null;
  /** Where the final status came from; null while not final. */
  source: FinalSource | null;
}

export interface SettledQuery {
  campaignKey: string;
  /** Messages whose final state was recorded after this point: a time (ms since the epoch, our clock) and, for
   * messages recorded in that same millisecond, the last id already read. */
  after: { recordedAt: number; providerMessageId: string };
  /** 1..1000 */
  limit: number;
}

export interface SettledRow extends ReportRow {
  /** When the store recorded the final state (ms since the epoch). */
  recordedAt: number;
}

export interface Page<T> {
  rows: T[];
  /** Pass as `after` for the next page; null on the last page. */
  next: string | null;
}

export interface RejectedEvent {
  id: number;
  receivedAt: number;
  reason: string;
  /** The event as received (parsed JSON). */
  event: unknown;
}

export interface PurgeOptions {
  /** Messages whose last activity (registration or event) is older than this go, unless someone waits. */
  olderThan: Date;
  /**
   * A waiter registered before this counts as abandoned (its workflow outlived any wait window, e.g. it was
   * terminated without releasing), so it no longer keeps its message. Unset: any unreleased waiter keeps it.
   */
  abandonWaitersRegisteredBefore?: Date;
}

export interface PurgeResult {
  messages: number;
  rejectedEvents: number;
  /** OTP sends and verifications recorded before the cutoff. */
  otpEvents: number;
}

/** One opt-out: a number never sent to until it is removed. */
export interface SuppressionEntry {
  /** International format with a leading plus sign (+E.164). */
  number: string;
  /** Where the opt-out came from (e.g. "replied STOP", "support ticket 42"); no personal data. */
  reason?: string;
}

export interface SuppressionRow {
  /** In clear for the operator who asked; null once the person's data was erased (the opt-out stays, as its lookup value). */
  number: string | null;
  reason: string | null;
  /** Milliseconds since the epoch. */
  addedAt: number;
}

/** What erasing one number changed in the store. */
export interface ErasureResult {
  /** Message rows (reports) that no longer name the number; their ids and states stay for the campaigns' counts. */
  messages: number;
  /** Rejected events that held the number, deleted. */
  rejectedEvents: number;
  /** Whether the number is on the suppression list: the opt-out stays, without the number. */
  suppressed: boolean;
  /** How an opt-out is kept: a keyed hash (encryption configured) or the number itself (no key configured). */
  suppressionKeptAs: 'keyed-hash' | 'number';
}

/** A request's class for the provider token's budget (src/store/request-bucket.ts holds the rule). */
export type RequestClass = 'interactive' | 'bulk';

/** A bulk request for a team, at the weight its worker reads for that team now (src/store/team-shares.ts). */
export interface BulkAsk {
  team: string;
  weight: number;
}

/** An interactive request, or a bulk one: for a team, or plain `bulk` for the default team at weight 1. */
export type RequestAsk = RequestClass | BulkAsk;

export interface BudgetSettings {
  /** Tokens the bucket holds when full: one request's reserve for interactive calls, plus one. */
  capacity: number;
  /** Tokens kept for interactive requests: bulk ones go only while more than this is left. */
  reserve: number;
  /** Tokens added per millisecond. */
  perMs: number;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was computed, ms since the epoch. */
  refilledAt: number;
}

export type BudgetAnswer = { granted: true } | { granted: false; waitMs: number };

/** Test hooks: `afterWrite` runs inside the transaction, after its writes and before its reads. */
export interface StoreHooks {
  afterWrite?: (op: 'register' | 'recordEvents') => Promise<void>;
}

export interface EncryptionOptions {
  /** Encrypts recipient numbers and rejected events (the first key encrypts, every key decrypts). */
  ring: KeyRing;
  /** HMAC-SHA256 key for lookups by number; separate from the ring so rotating the ring keeps lookups working. */
  lookupKey: Buffer;
}

export interface MessageStoreOptions {
  /** `postgres://` or `postgresql://` URL: PostgreSQL. Otherwise SQLite at `file` (default `.data/msgflow.db`). */
  url?: string;
  file?: string;
  encryption?: EncryptionOptions;
  /** PostgreSQL connections (default 5). */
  poolSize?: number;
  /** SQLite: how long a writer waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  hooks?: StoreHooks;
  /** The schema history to apply; only tests pass their own. */
  migrations?: readonly Migration[];
}

export interface MessageStore {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Records `messages` as awaited by workflow `workflowId` (idempotent) and returns the final outcomes already
   * recorded for any of them: events that arrived before the registration.
   */
  register(workflowId: string, messages: readonly SentMessage[]): Promise<FinalOutcome[]>;
  /**
   * Records a body's events (the first final state of a message wins; later ones change nothing) and returns,
   * per waiting workflow, the final outcomes to signal: every event whose message is final, newly or already,
   * so a redelivery after a failed signal signals again. Events nobody waits for yet are kept for their sender.
   */
  recordEvents(events: readonly StatusEventRecord[]): Promise<WaiterOutcomes[]>;
  /**
   * Records a final state asked of the provider (source `provider`) unless one is recorded already (the first
   * stands), marks the asking workflow's waiter told in the same transaction, and returns the state that stands.
   */
  recordProviderFinal(record: ProviderFinalRecord): Promise<StoredFinal>;
  /** The final outcomes recorded for these messages (those not final yet are absent). */
  outcomes(providerMessageIds: readonly string[]): Promise<FinalOutcome[]>;
  /** Workflow `workflowId` stops waiting for these messages, or for all of its messages when `ids` is omitted. */
  release(workflowId: string, providerMessageIds?: readonly string[]): Promise<number>;
  /** Retention: deletes old messages (never one still awaited, see PurgeOptions) and old rejected events. */
  purge(options: PurgeOptions): Promise<PurgeResult>;
  /** Per-recipient rows of a campaign, in a stable order, a page at a time. */
  report(query: ReportQuery): Promise<Page<ReportRow>>;
  /** A campaign's messages by when their final state was recorded, oldest first: the outcome feed's source. */
  settled(query: SettledQuery): Promise<SettledRow[]>;
  message(providerMessageId: string): Promise<StoredMessage | null>;
  /** Messages sent to `number` (through its keyed hash: works with or without encryption). */
  messagesTo(number: string): Promise<string[]>;
  /** A correctly signed body held an event that failed validation: kept for an operator to see. */
  recordRejected(reason: string, event: unknown): Promise<void>;
  /** Newest first; `before` is the previous page's `next`. */
  rejected(options: { limit: number; before?: string }): Promise<Page<RejectedEvent>>;
  /** Adds opt-outs (an entry already listed stays as it is); returns how many were new. */
  suppress(entries: readonly SuppressionEntry[]): Promise<number>;
  /** Removes opt-outs; returns how many were listed. */
  unsuppress(numbers: readonly string[]): Promise<number>;
  /** The numbers among `numbers` (+E.164) that are on the suppression list. */
  suppressedAmong(numbers: readonly string[]): Promise<string[]>;
  /** The suppression list, oldest first; `after` is the previous page's `next`. */
  suppressions(options: { limit: number; after?: string }): Promise<Page<SuppressionRow>>;
  /** Erases one person's number from reports and rejected events; an opt-out stays, without the number. */
  eraseNumber(number: string): Promise<ErasureResult>;
  /**
   * Asks the named request budget (one per provider token, shared by every process on this store) for one
   * request at `now`: granted, or how long to wait before asking again.
   */
  takeRequest(budget: string, settings: BudgetSettings, ask: RequestAsk, now?: number): Promise<BudgetAnswer>;
  /** The OTP sessions' record, and the fraud guard's judgements on it (shared by every worker on this store). */
  readonly otp: OtpEventStore;
  /** Outcomes recorded and not yet told to their workflows, and the relays' claims on telling them. */
  readonly outbox: Outbox;
  /** What a campaign's retry needs: its input, its recipients' fields, who to send to again. */
  readonly campaignInputs: CampaignInputStore;
  close(): Promise<void>;
}

export class StoreInputError extends Error {
  override name = 'StoreInputError';
}

/** The OTP sessions' record: each send as the fraud guard judged it, and each verified session. */
export interface OtpEventStore {
  /** Judges one send by `rules` against the recorded sends and records it; a repeated key gets its first decision. */
  judgeSend(attempt: OtpSendAttempt, rules: OtpGuardRules): Promise<OtpGuardDecision>;
  /** What the provider charged for a send the guard let through (minor units), and its text's or call's id. */
  recordCost(key: string, cost: number, currency: string, deliveryId?: string): Promise<void>;
  /** The session's code was verified (idempotent). */
  recordVerified(session: string, at: number): Promise<void>;
  /** Every event recorded at or after `since` (ms since the epoch), in the order recorded, numbers in clear. */
  history(since: number): Promise<RecordedOtpEvent[]>;
}

// The outbox (outbox.ts): outcomes recorded and not yet told, and the relays' claims on telling them.

/** A workflow with outcomes still to tell, and since when its oldest waits (ms since the epoch). */
export interface UntoldWorkflow {
  workflowId: string;
  oldestUntoldAt: number;
}

/** Where a sweep stopped in the untold outcomes, oldest first: the next page starts after it. */
export interface UntoldPosition {
  untoldSince: number;
  workflowId: string;
}

export interface UntoldQuery {
  /** Workflows at most. */
  limit: number;
  /** Continue after this position (the previous page's `next`); from the oldest when omitted. */
  after?: UntoldPosition;
  /** Workflows waiting out a refusal's backoff until after this time are left out (default: now). */
  now?: number;
}

export interface UntoldPage {
  /** In the order of their oldest untold outcome after the position. */
  workflows: UntoldWorkflow[];
  /** Where the next page starts; null when this one reached the newest untold outcome. */
  next: UntoldPosition | null;
}

export interface ClaimOptions {
  /** The claiming relay, unique per process. */
  owner: string;
  /** How long the claim holds if the relay never finishes (it crashed). */
  leaseMs: number;
  /** A workflow told less than this long ago is not claimed yet (the rate rule). */
  minIntervalMs: number;
  /** Most outcomes read per workflow; the rest stay untold for its next signal. */
  maxOutcomes: number;
  /**
   * Most outcomes read in all (default: no bound): the workflows are taken in the order given, whole, until one
   * does not fit (the first with anything untold is taken whatever its count); it and those after it are deferred.
   * It bounds the claim's transaction, however many outcomes its workflows hold.
   */
  maxOutcomesInAll?: number;
  now?: number;
}

/** A claimed workflow's untold outcomes, and how many of its signals in a row Temporal refused before. */
export interface ClaimedOutcomes extends WaiterOutcomes {
  refusals: number;
}

export interface Claimed {
  /** The workflows claimed, each with its untold outcomes (oldest first), in the order asked for. */
  outcomes: ClaimedOutcomes[];
  /** Asked for, but leased by another relay, told too recently or waiting out a refusal: try again later. */
  held: string[];
  /** Free and due, but past `maxOutcomesInAll`, in the order given: not claimed, nothing read; ask again at once. */
  deferred: DeferredWorkflow[];
}

/** A workflow a claim put off, with the outcomes it would have read of it (null: not counted). */
export interface DeferredWorkflow {
  workflowId: string;
  untold: number | null;
}

/** A workflow whose signal Temporal refused: not claimed again before `retryAt`. */
export interface Refusal {
  workflowId: string;
  retryAt: number;
  reason: string;
}

/** What became of the claimed workflows. Each claim is given back. */
export interface Telling {
  /** Signals accepted: these outcomes are told, and the workflow's last-told time is now. */
  told: ReadonlyArray<{ workflowId: string; providerMessageIds: readonly string[] }>;
  /** The workflow has ended: nobody is left to tell, so its waiters are released. */
  ended: readonly string[];
  /** Temporal refused the signal for a reason of the workflow's own: counted, and retried after its backoff. */
  refused: readonly Refusal[];
  /** Not told while Temporal was unreachable: the outcomes stay untold, nothing is counted against the workflow. */
  failed: readonly string[];
}

export interface OutboxBacklog {
  /** Outcomes recorded and not yet told. */
  untold: number;
  /** When the oldest of them was recorded (ms since the epoch); null when there is none. */
  oldestUntoldAt: number | null;
  /** Workflows with untold outcomes whose last signal Temporal refused. */
  refusedWorkflows: number;
}

/** Why a workflow has not been told its outcome: Temporal refused its last signals. */
export interface WorkflowRefusal {
  refusals: number;
  reason: string | null;
  retryAt: number;
}

export interface Outbox {
  /**
   * Workflows with untold outcomes, oldest untold outcome first, a page at a time from a position (a sweep's
   * cursor: bounded work per call, however large the backlog); those waiting out a refusal are left out.
   */
  untold(query: UntoldQuery): Promise<UntoldPage>;
  /**
   * Claims those of `workflowIds` that are free and due, and reads their untold outcomes; one with none is let
   * go. Due: told at least `minIntervalMs` ago, or (once per claim) waiting for nothing but untold outcomes; and
   * not waiting out a refusal.
   */
  claim(workflowIds: readonly string[], options: ClaimOptions): Promise<Claimed>;
  /** Marks what was told, releases ended workflows' waiters, counts refusals, and gives every claim back. */
  finish(owner: string, telling: Telling, now?: number): Promise<void>;
  backlog(): Promise<OutboxBacklog>;
  /** The workflow's refused signals, when its last one was refused; null otherwise. */
  refusal(workflowId: string): Promise<WorkflowRefusal | null>;
  /** Forgets claims that hold nothing any more (lease over, last told before `before`); returns how many. */
  forgetClaims(before: number): Promise<number>;
}

/** One recipient a retry sends to: the number, and its audience fields when the campaign was personal. */
export interface RetryRecipient {
  number: string;
  fields: Record<string, string> | null;
}

export interface RetryRecipientQuery {
  campaignKey: string;
  /** Final states to send to again (never `delivered`). */
  statuses: readonly string[];
  after?: string;
  limit: number;
}

export interface CampaignInputStore {
  /** Keeps the input a campaign started with (a later start under the same key replaces it). */
  keep(campaignKey: string, input: unknown): Promise<void>;
  /** The input kept for a campaign, or null. */
  input(campaignKey: string): Promise<unknown>;
  /** Keeps recipients' audience fields (numbers +E.164); a recipient kept already stays as it is. */
  keepRows(campaignKey: string, recipients: readonly RetryRecipient[]): Promise<void>;
  /**
   * The campaign's recipients whose final state is one of `statuses` and who got no delivered message from
   * it, each once, in a stable order a page at a time. Entries it refused as invalid were never sent, so are
   * never here.
   */
  retryRecipients(query: RetryRecipientQuery): Promise<Page<RetryRecipient>>;
}
