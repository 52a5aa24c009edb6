/**
 * msgflow's custom search attributes: typed keys for workflows and the client, and the name -> type table
 * the dev server is started with. Safe to import from workflow code (no I/O, no Node modules).
 * Search attributes are not encrypted by the payload codec: none may ever hold a phone number or a text.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const MsgflowKind = defineSearchAttributeKey('MsgflowKind', SearchAttributeType.KEYWORD);
export const MsgflowCampaignKey = defineSearchAttributeKey('MsgflowCampaignKey', SearchAttributeType.KEYWORD);
export const MsgflowProviderMessageId = defineSearchAttributeKey(
  'MsgflowProviderMessageId',
  SearchAttributeType.KEYWORD,
);
export const MsgflowFinalStatus = defineSearchAttributeKey('MsgflowFinalStatus', SearchAttributeType.KEYWORD);
export const MsgflowSender = defineSearchAttributeKey('MsgflowSender', SearchAttributeType.KEYWORD);
/** A campaign's phase (sending, paused, draining…), so the UI's list can filter on it without a query. */
export const MsgflowCampaignPhase = defineSearchAttributeKey('MsgflowCampaignPhase', SearchAttributeType.KEYWORD);

// `satisfies` keeps every key a Keyword: SEARCH_ATTRIBUTE_DEFINITIONS below relies on it.
export const SA = {
  kind: MsgflowKind,
  campaignKey: MsgflowCampaignKey,
  providerMessageId: MsgflowProviderMessageId,
  finalStatus: MsgflowFinalStatus,
  sender: MsgflowSender,
  campaignPhase: MsgflowCampaignPhase,
} as const satisfies Record<string, { name: string; type: typeof SearchAttributeType.KEYWORD }>;

/** Name -> type as the Temporal CLI spells it (`--search-attribute Name=Keyword`). */
export const SEARCH_ATTRIBUTE_DEFINITIONS: Readonly<Record<string, 'Keyword'>> = Object.freeze(
  Object.fromEntries(Object.values(SA).map((key) => [key.name, 'Keyword' as const])),
);

/** `--search-attribute` flags for `temporal server start-dev`. */
export function searchAttributeFlags(): string[] {
  return Object.entries(SEARCH_ATTRIBUTE_DEFINITIONS).flatMap(([name, type]) => [
    '--search-attribute',
    `${name}=${type}`,
  ]);
}
