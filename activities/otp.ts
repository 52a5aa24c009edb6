/**
 * OTP activities (provider queue). The code exists in clear only inside `verifyOtpCode`: the workflow and
 * its history hold it sealed with the OTP key ring, and the activity opens it just before the call.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { OtpSendRequest, OtpVerifyStatus } from '../src/api/otp.js';
import type { MessagingClient } from '../src/client/client.js';
import { RateLimitError } from '../src/client/errors.js';
import { parseRateLimit } from '../src/client/headers.js';
import { type KeyRing, openString } from '../src/crypto/keyring.js';
import { OTP_SOURCE_RATE_LIMITED } from '../src/definitions/otp.js';
import { callProvider } from './errors.js';

/** What the workflow keeps of a send: no number, no text. */
export interface SentOtp {
  otpId: string;
  providerMessageId: string;
  /** ISO 8601 */
  expiresAt: string;
}

export interface VerifyOtpCodeInput {
  otpId: string;
  sealedCode: string;
}

export interface CheckedOtpCode {
  status: OtpVerifyStatus;
  attemptsRemaining: number;
}

export const OTP_ACTIVITY_FAILURES = {
  /** The worker has no OTP key ring (MSGFLOW_OTP_SEAL_KEY / MSGFLOW_ENCRYPTION_KEY). */
  keyUnavailable: 'OtpKeyUnavailable',
  /** The sealed code was not sealed with a key of this worker's ring, or was tampered with. */
  sealInvalid: 'OtpSealInvalid',
} as const;

export function createOtpActivities(client: MessagingClient, keyRing: KeyRing | undefined) {
  const signal = () => Context.current().cancellationSignal;

  return {
    async sendOtpCode(request: OtpSendRequest, idempotencyKey: string): Promise<SentOtp> {
      const sent = await callProvider(() =>
        client.otp.send(request, { idempotencyKey, signal: signal() }).catch((error: unknown) => {
          throw sourceRateLimited(error) ?? error;
        }),
      );
      return { otpId: sent.otp_id, providerMessageId: sent.provider_message_id, expiresAt: sent.expires_at };
    },

    async verifyOtpCode({ otpId, sealedCode }: VerifyOtpCodeInput): Promise<CheckedOtpCode> {
      if (!keyRing) {
        throw ApplicationFailure.nonRetryable(
          'this worker has no OTP key ring configured',
          OTP_ACTIVITY_FAILURES.keyUnavailable,
        );
      }
      let code: string;
      try {
        code = openString(keyRing, sealedCode);
      } catch {
        throw ApplicationFailure.nonRetryable(
          'the sealed code cannot be opened with this key ring',
          OTP_ACTIVITY_FAILURES.sealInvalid,
        );
      }
      const checked = await callProvider(() => client.otp.verify({ otp_id: otpId, code }, { signal: signal() }));
      // Only this session's workflow verifies this otp_id, one attempt at a time. So `used` on a retry means
      // our earlier try of this same code succeeded and its response was lost: that try's answer stands.
      if (checked.status === 'used' && Context.current().info.attempt > 1) {
        return { status: 'verified', attemptsRemaining: checked.attempts_remaining };
      }
      return { status: checked.status, attemptsRemaining: checked.attempts_remaining };
    },
  };
}

/**
 * A 429 on an OTP send while the token still had requests left this window: the provider's per-source-address
 * OTP limit, not the token's. Waiting it out would hold a login for up to a minute, so it fails at once with
 * the provider's Retry-After for the caller to show ("try again in N s"). A 429 without the token's headers,
 * or with none left, is the token's limit and is retried as every provider call is.
 */
function sourceRateLimited(error: unknown): ApplicationFailure | undefined {
  if (!(error instanceof RateLimitError)) return undefined;
  const token = parseRateLimit(error.headers);
  if (!token || token.remaining <= 0) return undefined;
  return ApplicationFailure.create({
    type: OTP_SOURCE_RATE_LIMITED,
    message: 'too many OTP sends from this source address',
    nonRetryable: true,
    details: [{ retryAfterMs: error.retryAfterMs ?? null }],
  });
}
