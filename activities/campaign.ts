/**
 * Provider calls of a campaign, on the rate-limited provider queue: sending one chunk (idempotent by its
 * key) and the pre-flight reads of prices and balance. Results are cut down to what the workflow keeps, so
 * histories carry ids and money, not phone numbers.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SmsSendRequest } from '../src/api/sms.js';
import type { MessagingClient } from '../src/client/client.js';
import { campaignKeyOf } from '../src/definitions/workflow-ids.js';
import { nextWindowOpening, type RequestWindow, SEND_WINDOW_CLOSED } from '../src/definitions/send-window.js';
import type { MessageOutcome } from '../src/definitions/message-outcomes.js';
import type { MessageStore } from '../src/store/index.js';
import { outcomeFromStore } from '../src/store/outcome.js';
import type { AudienceAccess } from '../src/audience/access.js';
import type { AudienceLoaders } from '../src/audience/loaders.js';
import { type ChunkPage, type ChunkText, createChunkTexts } from './campaign-texts.js';
import { callProvider } from './errors.js';
import { callingWorkflowId } from './message-store.js';
import { recordSent } from '../src/tracing/spans.js';

export interface CampaignChunkResult {
  campaignId: string;
  cost: number;
  currency: string;
  segments: number;
  providerMessageIds: string[];
  /** Outcomes the store already held when the messages were recorded (their events came first). */
  alreadyFinal: MessageOutcome[];
}

export interface CampaignPricing {
  currency: string;
  smsSegment: number;
}

export interface CampaignBalance {
  balance: number;
  currency: string;
  spendCap: number | null;
  spentThisMonth: number;
}

function rowsOf(recipients: readonly string[], fields: ChunkText['fields']) {
  return recipients.map((digits, i) => ({ number: `+${digits.replace(/^\+/, '')}`, fields: fields[i] ?? null }));
}

export function createCampaignProviderActivities(
  client: MessagingClient,
  store: MessageStore,
  audienceLoaders?: AudienceLoaders,
  audienceAccess?: AudienceAccess,
) {
  const signal = () => Context.current().cancellationSignal;
  const textOf = createChunkTexts(audienceLoaders, audienceAccess);

  return {
    /**
     * Sends one chunk, then records its messages (with their numbers, for the per-recipient report) as
     * awaited by the campaign before completing: a retry after a crash gets the same answer from the
     * provider under the same key and records them again, which changes nothing. With `page`, the message is
     * a template and the recipients' text is rendered from the page they were read from. With `window`, a
     * request not yet made is refused once its window has closed (SendWindowClosed, nothing sent); a retry of
     * one that may have been sent completes whatever the time, so nothing charged goes untracked.
     */
    async sendCampaignChunk(
      request: SmsSendRequest,
      idempotencyKey: string,
      { page, window }: { page?: ChunkPage; window?: RequestWindow } = {},
    ): Promise<CampaignChunkResult> {
      const rendered = page ? await textOf(request.message, page, request.recipients, signal()) : undefined;
      const personal = { ...request, message: rendered?.text ?? request.message };
      const retry = window?.mayHaveBeenSent || Context.current().info.attempt > 1;
      if (window && !retry && nextWindowOpening(Date.now(), window.window) !== null) {
        throw ApplicationFailure.create({
          type: SEND_WINDOW_CLOSED,
          message: 'the send window closed before this request was made: nothing was sent',
          nonRetryable: true,
        });
      }
      const sent = await callProvider(() => client.sms.send(personal, { idempotencyKey, signal: signal() }));
      const workflowId = callingWorkflowId();
      const campaignKey = campaignKeyOf(workflowId);
      // A personal text's fields are kept, so a retry renders it again after the audience is gone.
      if (rendered) await store.campaignInputs.keepRows(campaignKey, rowsOf(request.recipients, rendered.fields));
      const traceParent = recordSent(
        sent.messages.map((m) => m.provider_message_id),
        { 'msgflow.campaign_key': campaignKey },
      );
      const known = await store.register(
        workflowId,
        sent.messages.map((m) => ({
          providerMessageId: m.provider_message_id,
          number: m.mobile_number,
          campaignKey,
          traceParent,
        })),
      );
      return {
        campaignId: sent.campaign_id,
        cost: sent.cost,
        currency: sent.currency,
        segments: sent.segments,
        providerMessageIds: sent.messages.map((m) => m.provider_message_id),
        alreadyFinal: known.map(outcomeFromStore),
      };
    },

    async getCampaignPricing(): Promise<CampaignPricing> {
      const pricing = await callProvider(() => client.pricing.get({ signal: signal() }));
      return { currency: pricing.currency, smsSegment: pricing.prices.sms_segment };
    },

    async getCampaignBalance(): Promise<CampaignBalance> {
      const balance = await callProvider(() => client.balance.get({ signal: signal() }));
      return {
        balance: balance.balance,
        currency: balance.currency,
        spendCap: balance.spend_cap,
        spentThisMonth: balance.spent_this_month,
      };
    },
  };
}
