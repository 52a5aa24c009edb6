/**
 * The `msgflow` Nexus service: what other teams' workflows call through a Nexus endpoint. Its operations take
 * and give the workflow inputs and results defined in src/api (types only here: a caller's workflow bundles
 * this module, so it stays free of zod).
 */
import * as nexus from 'nexus-rpc';
import type { CampaignResult, StartCampaignRequest } from './campaign-io.js';
import type { CampaignStatus } from './campaign-status.js';
import type {
  OtpSendAnswer,
  OtpVerificationInput,
  OtpVerifyAnswer,
  VerifyOtpInput,
  VoiceCallInput,
  VoiceCallResult,
} from './otp-io.js';
import type { SendSmsInput, SendSmsResult } from './workflow-io.js';

export type { StartCampaignRequest };

/** The service's name on the wire: callers' endpoints route it to msgflow's worker. */
export const MSGFLOW_NEXUS_SERVICE_NAME = 'msgflow';

/**
 * How a campaign ended, as its caller reads it: the campaign's result with no recipient's number in it (the
 * invalid ones are counted, not listed).
 */
export type CampaignSummary = Omit<CampaignResult, 'invalid'> & { key: string; invalid: { count: number } };

/** `campaignStatus`'s input: the campaign's key. */
export interface CampaignStatusRequest {
  key: string;
}

export const msgflowNexusService = nexus.service(MSGFLOW_NEXUS_SERVICE_NAME, {
  /** One text to one or a few recipients; answers with each message's final state. */
  sendSms: nexus.operation<SendSmsInput, SendSmsResult>(),
  /** Sends (or resends) a one-time password; answers once the provider took it. */
  sendOtp: nexus.operation<OtpVerificationInput, OtpSendAnswer>(),
  /** Checks a code: `verified` once, otherwise why not. */
  verifyOtp: nexus.operation<VerifyOtpInput, OtpVerifyAnswer>(),
  /**
   * Starts a campaign under its key, or finds the one the key already started (never sent twice), and
   * completes when it ends, hours or days later; cancelling the operation cancels the campaign (no further
   * chunk is sent).
   */
  startCampaign: nexus.operation<StartCampaignRequest, CampaignSummary>(),
  /** A campaign's progress now, or how it ended. */
  campaignStatus: nexus.operation<CampaignStatusRequest, CampaignStatus>(),
  /** Places a text-to-speech call; answers with its final state (or the last one seen by its deadline). */
  placeVoiceCall: nexus.operation<VoiceCallInput, VoiceCallResult>(),
});

export type MsgflowNexusService = typeof msgflowNexusService;
