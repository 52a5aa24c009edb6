/**
 * Voice-call activities (provider queue). No voice events exist in the spec, so a call is followed by
 * polling GET /voice/{id}: `awaitFinalVoiceCall` fails (retryably) while the call is not final, and its
 * retry policy is the backoff schedule — one activity in the history however many polls it takes.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import { isFinalVoiceStatus } from '../src/api/constants.js';
import type { VoiceCall, VoiceSendRequest } from '../src/api/voice.js';
import type { MessagingClient } from '../src/client/client.js';
import { VOICE_CALL_NOT_FINAL } from '../src/definitions/voice.js';
import { callProvider } from './errors.js';

/** What the workflow keeps of a call: no number, no text. */
export interface VoiceCallSnapshot {
  id: string;
  status: VoiceCall['status'];
  durationSeconds: number;
  cost: number;
  currency: string;
}

function snapshotOf(call: VoiceCall): VoiceCallSnapshot {
  return {
    id: call.id,
    status: call.status,
    durationSeconds: call.duration_seconds,
    cost: call.cost,
    currency: call.currency,
  };
}

export function createVoiceActivities(client: MessagingClient) {
  const signal = () => Context.current().cancellationSignal;

  return {
    async placeVoiceCall(request: VoiceSendRequest, idempotencyKey: string): Promise<VoiceCallSnapshot> {
      return snapshotOf(await callProvider(() => client.voice.send(request, { idempotencyKey, signal: signal() })));
    },

    async getVoiceCall(id: string): Promise<VoiceCallSnapshot> {
      return snapshotOf(await callProvider(() => client.voice.get(id, { signal: signal() })));
    },

    /** Resolves with the call once it is final; until then each attempt fails, so the retry policy polls. */
    async awaitFinalVoiceCall(id: string): Promise<VoiceCallSnapshot> {
      const call = snapshotOf(await callProvider(() => client.voice.get(id, { signal: signal() })));
      if (!isFinalVoiceStatus(call.status)) {
        // Benign: an expected "not yet", logged at debug level and kept out of the failure metrics.
        throw ApplicationFailure.create({
          message: `call is ${call.status}`,
          type: VOICE_CALL_NOT_FINAL,
          details: [call.status],
          category: ApplicationFailureCategory.BENIGN,
        });
      }
      return call;
    },
  };
}
