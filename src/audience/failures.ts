/** Failure types of audience reading; all non-retryable: a retry cannot fix a missing file or a bad header. */
import { ApplicationFailure } from '@temporalio/activity';

export const AUDIENCE_FAILURES = {
  unavailable: 'AudienceUnavailable',
  /** A file outside the allowed folders, or a URL whose scheme, host or address is not allowed. */
  refused: 'AudienceSourceRefused',
  invalidFormat: 'AudienceFormatInvalid',
  changed: 'AudienceChanged',
  /** A recipient lacks a field the message's template names. */
  fieldMissing: 'AudienceFieldMissing',
  /** A window in local hours, and a recipient whose zone is neither given nor told by their number. */
  timeZoneUnknown: 'AudienceTimeZoneUnknown',
} as const;

export function audienceFailure(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}
