/**
 * The `msgflow` Nexus service: what other teams' workflows call through a Nexus endpoint. Its operations take
 * and give the workflow inputs and results defined in src/api (types only here: a caller's workflow bundles
 * this module, so it stays free of zod).
 */
import * as nexus from 'nexus-rpc';
import type { CampaignInput } from './campaign-io.js';
import type { OtpSendAnswer, OtpVerificationInput, OtpVerifyAnswer, VerifyOtpInput } from './otp-io.js';
import type { SendSmsInput, SendSmsResult } from './workflow-io.js';

/** The service's name on the wire: callers' endpoints route it to msgflow's worker. */
export const MSGFLOW_NEXUS_SERVICE_NAME = 'msgflow';

export const msgflowNexusService = nexus.service(MSGFLOW_NEXUS_SERVICE_NAME, {
  /** One text to one or a few recipients; answers with each message's final state. */
  sendSms: nexus.operation<SendSmsInput, SendSmsResult>(),
  /** Sends (or resends) a one-time password; answers once the provider took it. */
  sendOtp: nexus.operation<OtpVerificationInput, OtpSendAnswer>(),
  /** Checks a code: `verified` once, otherwise why not. */
  verifyOtp: nexus.operation<VerifyOtpInput, OtpVerifyAnswer>(),
  /** Starts a campaign under the caller's key (once per key) for the endpoint's team; answers once it started. */
  startCampaign: nexus.operation<{ key: string; campaign: CampaignInput }, { key: string; workflowId: string }>(),
});

export type MsgflowNexusService = typeof msgflowNexusService;
