/**
 * `msgflow`: start msgflow's workflows from a backend service and await their results (the `Msgflow`
 * facade), with the connection and data converter they need, the workflows' input and result types, the
 * errors callers catch, and campaign reports from the message store. Light on purpose: no worker, and no
 * native module until a store is opened (SQLite needs the optional peer `better-sqlite3`, PostgreSQL `pg`).
 */
import type { z } from 'zod';
import type * as api from '../api/campaign-io.js';
import type * as otp from '../api/otp-io.js';
import type * as sms from '../api/workflow-io.js';

export { Msgflow, type MsgflowOptions } from '../starter/index.js';
export { InvalidWorkflowInputError } from '../starter/validate.js';
export { KeyReusedError } from '../starter/start-once.js';
export type { StartedWorkflow, StartOptions } from '../starter/started-workflow.js';
export { generateOtpKeys, type OtpKeys, otpKeysFromEnv } from '../crypto/otp-keys.js';
export {
  OtpBlockedError,
  OtpRateLimitedError,
  OtpSendFailedError,
  OtpVerificationUnavailableError,
  otpWorkflowId,
} from '../starter/otp.js';
export type { CampaignRun } from '../starter/campaigns.js';
// Resending a campaign to its failed recipients (Msgflow.retryCampaign).
export {
  type CampaignRelations,
  campaignRelations,
  CampaignStillRunningError,
  NoKeptInputError,
  preflightEstimate,
  type RetryOptions,
  type RetryOverrides,
} from '../starter/campaign-retry.js';
export { DEFAULT_RETRY_STATUSES, RETRY_STATUSES, type RetryStatus } from '../api/campaign-retry.js';
// Why a workflow failed: its root cause under Temporal's wrappers, and a campaign's status whatever its state.
export { explainFailure, rootCause } from '../starter/failures.js';
export type { ActivityRetry, FailureReason, FailureStatus } from '../api/failure-reason.js';
export type { CampaignStatus, CampaignStatusPhase } from '../starter/campaign-status.js';
// The OTP fraud guard's rules, as a rules file states them (MSGFLOW_OTP_GUARD_RULES).
export {
  DEFAULT_OTP_GUARD_RULES,
  OTP_BLOCK_REASONS,
  type OtpBlockReason,
  type OtpGuardRules,
  type OtpGuardRulesFile,
} from '../api/otp-guard.js';
export type {
  CampaignScheduleInfo,
  CampaignSchedules,
  CampaignScheduleSummary,
  ScheduledRun,
} from '../starter/schedules.js';

// Per-recipient reports of campaigns, read from the message store the worker and the ingress write.
export { CampaignReports, type OutcomeFeedOptions, type ReportPageOptions } from '../starter/reports.js';
// The suppression list (opt-outs) and erasing one person's number, in the same store.
export {
  type AddOptions,
  type ImportResult,
  type ImportSource,
  InvalidNumbersError,
  Suppressions,
} from '../starter/suppressions.js';
export type { Erasure } from '../starter/erasure.js';
export {
  openMessageStore,
  storeOptionsFromEnv,
  StoreInputError,
  StoreSchemaError,
  type MessageStore,
  type MessageStoreOptions,
  type Page,
  type ReportRow,
  type SettledRow,
  type StoredMessage,
  type SuppressionRow,
  type ErasureResult,
} from '../store/index.js';

// Connecting: the same Temporal settings and data converter as msgflow's worker (they must agree).
export {
  connectClient,
  connectionSettings,
  ensureReachable,
  lazyClient,
  DEFAULT_TEMPORAL_ADDRESS,
  type TemporalConnectionSettings,
  TemporalUnreachableError,
} from '../temporal/connection.js';
export { dataConverterFromEnv, keyRingOf, msgflowDataConverter } from '../temporal/data-converter.js';
/** Traces over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set: call before connecting. */
export { activeTracing, startTracingFromEnv, type Tracing } from '../tracing/setup.js';
export type { KeyRing } from '../crypto/keyring.js';
export { TASK_QUEUES } from '../definitions/task-queues.js';
export { ConfigError } from '../config.js';
export { MissingPackageError } from '../optional-packages.js';
/** Failure types of activity failures (e.g. `InsufficientBalance`), as seen in workflow failures' causes. */
export { FAILURE_TYPES } from '../definitions/failure-types.js';

// Workflow inputs (what the facade accepts, before defaults) and results.
export type SendSmsInput = z.input<typeof sms.SendSmsInput>;
export type { MessageResult, SendSmsResult } from '../api/workflow-io.js';
export type { MessageOutcome, OutcomeSource } from '../definitions/message-outcomes.js';
export type CampaignInput = z.input<typeof api.CampaignInput>;
export type {
  AudienceSource,
  CampaignPhase,
  CampaignProgress,
  CampaignResult,
  CampaignScheduleInput,
  CampaignScheduleUpdate,
  CostEstimate,
  InvalidRecipient,
  ScheduleTiming,
  SendWindow,
} from '../api/campaign-io.js';
export type OtpSendInput = z.input<typeof otp.OtpVerificationInput>;
export type OtpVerifyInput = z.input<typeof otp.VerifyOtpInput>;
export type CheckContactsInput = z.input<typeof otp.CheckContactsInput>;
export type {
  CheckContactsResult,
  ContactCheck,
  OtpOutcome,
  OtpSendAnswer,
  OtpState,
  OtpVerificationResult,
  OtpVerifyAnswer,
  VoiceCallInput,
  VoiceCallResult,
} from '../api/otp-io.js';
