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

/** File errors no retry can fix, and how each is told (the path is left out: it may name a person). */
const UNREADABLE_FILE: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of its path is not a folder',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'its name is too long',
};

/** A file error as a failure: non-retryable when no retry can fix it (a missing file, a folder), else as it is. */
export function fileReadFailure(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const reason = code === undefined ? undefined : UNREADABLE_FILE[code];
  if (reason === undefined) return error;
  return audienceFailure(AUDIENCE_FAILURES.unavailable, `cannot read the audience file: ${reason} (${code})`);
}
