/**
 * `msgflow/nexus`: the `msgflow` Nexus service's definition, for other teams' workflows that call msgflow
 * through a Nexus endpoint (docs/nexus.md). It loads nothing but `nexus-rpc`, so a caller's workflow bundle can
 * import it; the input and result types are msgflow's workflow contract.
 */
export {
  type CampaignStatusRequest,
  type CampaignSummary,
  MSGFLOW_NEXUS_SERVICE_NAME,
  type MsgflowNexusService,
  msgflowNexusService,
  type StartCampaignRequest,
} from '../api/nexus-service.js';
export type { CampaignInput } from '../api/campaign-io.js';
export type { CampaignStatus, CampaignStatusPhase } from '../api/campaign-status.js';
export type {
  OtpSendAnswer,
  OtpVerificationInput,
  OtpVerifyAnswer,
  VerifyOtpInput,
  VoiceCallInput,
  VoiceCallResult,
} from '../api/otp-io.js';
export type { MessageResult, SendSmsInput, SendSmsResult } from '../api/workflow-io.js';
