/**
 * `msgflow/nexus`: the `msgflow` Nexus service's definition, for other teams' workflows that call msgflow
 * through a Nexus endpoint (docs/nexus.md). It loads nothing but `nexus-rpc`, so a caller's workflow bundle can
 * import it; the input and result types are msgflow's workflow contract.
 */
export { MSGFLOW_NEXUS_SERVICE_NAME, type MsgflowNexusService, msgflowNexusService } from '../api/nexus-service.js';
export type { OtpSendAnswer, OtpVerificationInput, OtpVerifyAnswer, VerifyOtpInput } from '../api/otp-io.js';
export type { MessageResult, SendSmsInput, SendSmsResult } from '../api/workflow-io.js';
