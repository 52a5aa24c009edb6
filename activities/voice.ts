/**
 * Voice-call activities (provider queue). No voice events exist in the spec, so a call is followed by
 * polling GET /voice/{id}: `awaitFinalVoiceCall` fails (retryably) while the call is not final, and its
 * retry policy is the backoff schedule — one activity in the history however many polls it takes.
 * A final state seen by either look is recorded in the message store (source `provider`, keyed by the
 * call's id, its number sealed like a text's), where reports, `msgflow message show` and the OTP guard see it.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ApplicationFailureCategory } from '@temporalio/common';
import { isFinalVoiceStatus } from '../src/api/constants.js';
import type { VoiceCall, VoiceSendRequest } from '../src/api/voice.js';
import type { MessagingClient } from '../src/client/client.js';
import type { MessageStore } from '../src/store/index.js';
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

export function createVoiceActivities(client: MessagingClient, store: MessageStore) {
  const signal = () => Context.current().cancellationSignal;
  /** A final state is recorded in the store before the workflow hears of it. */
  const kept = async (call: VoiceCall): Promise<VoiceCallSnapshot> => {
    if (isFinalVoiceStatus(call.status))
      await store.recordProviderFinal({
        providerMessageId: call.id,
        status: call.status,
        timestamp: call.updated_at,
        number: call.mobile_number,
      });
    return snapshotOf(call);
  };
  const look = async (id: string) => kept(await callProvider(() => client.voice.get(id, { signal: signal() })));

  return {
    async placeVoiceCall(request: VoiceSendRequest, idempotencyKey: string): Promise<VoiceCallSnapshot> {
      return kept(await callProvider(() => client.voice.send(request, { idempotencyKey, signal: signal() })));
    },

    async getVoiceCall(id: string): Promise<VoiceCallSnapshot> {
      return look(id);
    },

    /** Resolves with the call once it is final; until then each attempt fails, so the retry policy polls. */
    async awaitFinalVoiceCall(id: string): Promise<VoiceCallSnapshot> {
      const call = await look(id);
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
