/**
 * Provider calls of a campaign, on the rate-limited provider queue: sending one chunk (idempotent by its
 * key) and the pre-flight reads of prices and balance. Results are cut down to what the workflow keeps, so
 * histories carry ids and money, not phone numbers.
 */
import { Context } from '@temporalio/activity';
import type { SmsSendRequest } from '../src/api/sms.js';
import type { MessagingClient } from '../src/client/client.js';
import { callProvider } from './errors.js';

export interface CampaignChunkResult {
  campaignId: string;
  cost: number;
  currency: string;
  segments: number;
  providerMessageIds: string[];
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

export function createCampaignProviderActivities(client: MessagingClient) {
  const signal = () => Context.current().cancellationSignal;

  return {
    async sendCampaignChunk(request: SmsSendRequest, idempotencyKey: string): Promise<CampaignChunkResult> {
      const sent = await callProvider(() => client.sms.send(request, { idempotencyKey, signal: signal() }));
      return {
        campaignId: sent.campaign_id,
        cost: sent.cost,
        currency: sent.currency,
        segments: sent.segments,
        providerMessageIds: sent.messages.map((m) => m.provider_message_id),
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
