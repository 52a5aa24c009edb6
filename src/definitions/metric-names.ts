/**
 * Every metric msgflow defines, named in one place (README, "Operations" › "Metrics", lists them). Safe to
 * import from workflow code: plain strings only. Counters get Prometheus's `_total` suffix when exported.
 */
export const METRICS = {
  // Ingress (prom-client, GET /metrics on the ingress port).
  ingressDeliveries: 'msgflow_ingress_deliveries_total',
  ingressEventsReceived: 'msgflow_ingress_events_received_total',
  ingressSignatureRejections: 'msgflow_ingress_signature_rejections_total',
  ingressEventsRejected: 'msgflow_ingress_events_rejected_total',
  ingressOutcomesPerSignal: 'msgflow_ingress_outcomes_per_signal',
  ingressSignalSeconds: 'msgflow_ingress_signal_duration_seconds',
  ingressRequestSeconds: 'msgflow_ingress_request_duration_seconds',
  // The relay's outbox (gauges read from the message store at each scrape of an ingress).
  relayUntoldOutcomes: 'msgflow_relay_untold_outcomes',
  relayOldestUntoldSeconds: 'msgflow_relay_oldest_untold_seconds',
  relayRefusedWorkflows: 'msgflow_relay_refused_workflows',
  // Worker (the Temporal SDK's meter, exported with the SDK's own metrics on the worker's metrics address).
  smsSent: 'msgflow_sms_sent',
  providerCharges: 'msgflow_provider_charged_minor_units',
  providerRateLimited: 'msgflow_provider_rate_limited',
  messageOutcomes: 'msgflow_message_outcomes',
  otpGuardDecisions: 'msgflow_otp_guard_decisions',
  otpChannelAttempts: 'msgflow_otp_channel_attempts',
} as const;

/**
 * OTP deliveries by channel and outcome: counted by the OTP workflow, and created at zero by the worker runtime
 * so the dashboard's panel has a series before the first session.
 */
export const OTP_CHANNEL_ATTEMPTS_COUNTER = {
  name: METRICS.otpChannelAttempts,
  unit: 'deliveries',
  description: 'Deliveries of OTP codes, by channel and outcome',
} as const;
