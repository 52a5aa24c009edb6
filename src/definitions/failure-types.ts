/**
 * The failure types of provider activities (activities/errors.ts classifies each provider error once), named
 * here so workflows, metrics and operators use the same stable names. Plain strings: workflow-safe.
 */
export const FAILURE_TYPES = {
  authentication: 'ProviderAuthenticationFailed',
  insufficientBalance: 'InsufficientBalance',
  permissionDenied: 'ProviderPermissionDenied',
  validation: 'ProviderValidationFailed',
  invalidInput: 'InvalidInput',
  notFound: 'ProviderNotFound',
  rateLimited: 'ProviderRateLimited',
  inProgress: 'IdempotencyKeyInProgress',
} as const;
