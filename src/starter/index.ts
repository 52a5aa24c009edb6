/**
 * The facade backend services use to start msgflow workflows and await their results. Inputs are
 * validated here, with the schemas of src/api, before anything reaches Temporal.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import { CampaignInput, CampaignKey } from '../api/campaign-io.js';
import {
  CheckContactsInput,
  type CheckContactsResult,
  type OtpSendAnswer,
  type OtpState,
  OtpVerificationInput,
  type OtpVerifyAnswer,
  VerifyOtpInput,
  VoiceCallInput,
  type VoiceCallResult,
} from '../api/otp-io.js';
import { SendSmsInput, type SendSmsResult } from '../api/workflow-io.js';
import type { MessageOutcome } from '../definitions/message-outcomes.js';
import type { MessageStore } from '../store/index.js';
import { SA } from '../definitions/search-attributes.js';
import { INTERACTIVE_PRIORITY, TASK_QUEUES } from '../definitions/task-queues.js';
import { awaitMessageWorkflowId, smsWorkflowId } from '../definitions/workflow-ids.js';
import type { awaitMessage } from '../../workflows/await-message.js';
import type { sendSms } from '../../workflows/send-sms.js';
import { type CampaignRun, campaignRun, startCampaign } from './campaigns.js';
import { retryCampaign, type RetryOptions } from './campaign-retry.js';
import { startContactCheck } from './contacts.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import { otpState, sendOtp, verifyOtp } from './otp.js';
import { CampaignSchedules } from './schedules.js';
import type { StartedWorkflow, StartOptions } from './started-workflow.js';
import { CampaignReports } from './reports.js';
import { type Erasure, eraseNumber } from './erasure.js';
import { type SuppressionStore, Suppressions } from './suppressions.js';
import { startOnce } from './start-once.js';
import { validate } from './validate.js';
import { startVoiceCall } from './voice.js';

// The facade's public names: services import them from here.
export interface MsgflowOptions {
  /** Needed by the OTP methods (`otpKeysFromEnv()` reads them from MSGFLOW_OTP_HASH_KEY / MSGFLOW_OTP_SEAL_KEY). */
  otpKeys?: OtpKeys;
  /**
   * The message store the worker and ingress use: needed by `reports`, `suppressions`, `eraseNumber` and
   * `retryCampaign`
   * (`openMessageStore(storeOptionsFromEnv())`).
   */
  store?: Pick<MessageStore, 'report' | 'settled' | 'message' | 'eraseNumber' | 'campaignInputs'> & SuppressionStore;
}

export class Msgflow {
  constructor(
    readonly client: Client,
    readonly taskQueue: string = TASK_QUEUES.workflows,
    private readonly options: MsgflowOptions = {},
  ) {}

  /**
   * Per-recipient reports and the outcome feed of campaigns, read from the message store (see MsgflowOptions):
   * `reports.page(key)`, `reports.rows(key)`, `reports.outcomes(key, { done: run.result() })`, `reports.message(id)`.
   */
  get reports(): CampaignReports {
    return new CampaignReports(this.storeFor('reports'));
  }

  /**
   * The suppression list (opt-outs), kept in the message store: `add`, `remove`, `has`, `page`, `rows`, `import`.
   * Every campaign and sendSms leaves out the numbers on it when it sends.
   */
  get suppressions(): Suppressions {
    return new Suppressions(this.storeFor('suppressions'));
  }

  /** Erases a number from the message store's reports (an opt-out stays, without it) and says what remains where. */
  eraseNumber(number: string): Promise<Erasure> {
    return eraseNumber(this.storeFor('eraseNumber'), number);
  }

  /**
   * Sends one text to one or a few recipients (never to one on the suppression list, each number once);
   * `result()` resolves with each message's final state. The key's run is the answer while Temporal keeps it
   * (open or completed); the same key with another input throws KeyReusedError; a failed run may be retried.
   */
  async sendSms(
    input: z.input<typeof SendSmsInput>,
    { key = randomUUID() }: StartOptions = {},
  ): Promise<StartedWorkflow<SendSmsResult>> {
    const parsed = validate(SendSmsInput, input, 'Invalid SMS');
    const handle = await startOnce<typeof sendSms>(this.client, 'sendSms', key, {
      workflowId: smsWorkflowId(key),
      taskQueue: this.taskQueue,
      args: [parsed],
      typedSearchAttributes: [
        { key: SA.kind, value: 'sms' },
        { key: SA.sender, value: parsed.sender },
      ],
      // Shown in the Temporal UI; never a number or the text (summaries are readable without the codec key).
      staticSummary: `SMS from ${parsed.sender} to ${parsed.recipients.length} recipient(s)`,
      // A service is waiting for it: its workflow tasks go before queued campaign work.
      priority: INTERACTIVE_PRIORITY,
    });
    return { workflowId: handle.workflowId, result: () => handle.result() };
  }

  /** Waits durably for the final state of any provider message (e.g. one sent with your own client). */
  async awaitMessage(
    providerMessageId: string,
    { waitWindowMs }: { waitWindowMs?: number } = {},
  ): Promise<StartedWorkflow<MessageOutcome>> {
    const handle = await this.client.workflow.start<typeof awaitMessage>('awaitMessage', {
      workflowId: awaitMessageWorkflowId(providerMessageId, randomUUID()),
      taskQueue: this.taskQueue,
      args: [{ providerMessageId, waitWindowMs }],
      typedSearchAttributes: [
        { key: SA.kind, value: 'await' },
        { key: SA.providerMessageId, value: providerMessageId },
      ],
      staticSummary: `Await the final state of message ${providerMessageId}`,
    });
    return { workflowId: handle.workflowId, result: () => handle.result() };
  }

  /**
   * Starts an SMS campaign (`smsCampaign`) under `key`, or finds the one already started with it and the same
   * input: the same key never sends twice, and with another input throws KeyReusedError. Follow it with the
   * returned run (progress, pause, resume, cancel, result).
   */
  async startCampaign(
    input: z.input<typeof CampaignInput>,
    { key = randomUUID() }: StartOptions = {},
  ): Promise<CampaignRun> {
    const parsed = validate(CampaignInput, input, 'Invalid campaign');
    return startCampaign(this.client, this.taskQueue, parsed, validate(CampaignKey, key, 'Invalid campaign key'));
  }

  /**
   * Resends campaign `key` to its recipients whose final state is failed, undelivered or expired (`statuses`
   * picks others; never one delivered, invalid, or on the suppression list now): a campaign keyed
   * `<key>:retry`, started once (again: the same run), with the first's input as the message store keeps it
   * and `overrides` applied. Throws CampaignStillRunningError while the first runs. `preflightEstimate(run)`
   * tells its count and price. Needs the message store (see MsgflowOptions).
   */
  async retryCampaign(key: string, options: RetryOptions = {}): Promise<CampaignRun> {
    const target = { client: this.client, taskQueue: this.taskQueue, store: this.storeFor('retryCampaign') };
    return retryCampaign(target, key, options);
  }

  /** The campaign with this key (or its workflow id), e.g. to watch or steer one started elsewhere. */
  campaign(key: string): CampaignRun {
    return campaignRun(this.client, key);
  }

  /** Scheduled reminder campaigns: create, list, describe, pause, unpause, trigger, update, delete. */
  get campaignSchedules(): CampaignSchedules {
    return new CampaignSchedules(this.client, this.taskQueue);
  }

  /**
   * Sends a one-time password to `recipient` for `purpose`, answering once the provider took it. A pair
   * with a running session gets a resend instead, within its cooldown and send limit (see src/starter/otp.ts).
   */
  async sendOtp(input: z.input<typeof OtpVerificationInput>): Promise<OtpSendAnswer> {
    return sendOtp(this.otpTarget(), validate(OtpVerificationInput, input, 'Invalid OTP request'));
  }

  /** Checks a code: `verified` once; `invalid` (attempts left), `locked`, `expired` or `used` otherwise. */
  async verifyOtp(input: z.input<typeof VerifyOtpInput>): Promise<OtpVerifyAnswer> {
    return verifyOtp(this.otpTarget(), validate(VerifyOtpInput, input, 'Invalid OTP verification'));
  }

  /** The running session's state for a pair, or null. */
  async otpState(input: { purpose: string; recipient: string }): Promise<OtpState | null> {
    const { purpose, recipient } = validate(
      VerifyOtpInput.pick({ purpose: true, recipient: true }),
      input,
      'Invalid OTP pair',
    );
    return otpState(this.otpTarget(), purpose, recipient);
  }

  /** Places a text-to-speech call; `result()` resolves with its final state (or the last one seen by the deadline). */
  async startVoiceCall(
    input: z.input<typeof VoiceCallInput>,
    { key }: StartOptions = {},
  ): Promise<StartedWorkflow<VoiceCallResult>> {
    return startVoiceCall(this.client, this.taskQueue, validate(VoiceCallInput, input, 'Invalid voice call'), key);
  }

  /** Looks up numbers and verifies emails; `result()` splits them into valid and invalid. */
  async checkContacts(
    input: z.input<typeof CheckContactsInput>,
    { key }: StartOptions = {},
  ): Promise<StartedWorkflow<CheckContactsResult>> {
    return startContactCheck(
      this.client,
      this.taskQueue,
      validate(CheckContactsInput, input, 'Invalid contact check'),
      key,
    );
  }

  private storeFor(what: string) {
    if (!this.options.store) throw new Error(`${what} need the message store: pass { store } to new Msgflow(…)`);
    return this.options.store;
  }

  private otpTarget() {
    const keys = this.options.otpKeys;
    if (!keys) throw new Error('this Msgflow has no otpKeys: pass { otpKeys: otpKeysFromEnv() } to its constructor');
    return { client: this.client, taskQueue: this.taskQueue, keys };
  }
}
