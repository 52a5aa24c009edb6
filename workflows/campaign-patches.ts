/**
 * Every `patched()` gate of `smsCampaign`, by what it changed. A run recorded before a change replays
 * without it; each gate is asked at the point its change takes effect, never earlier.
 */
export const CAMPAIGN_PATCHES = {
  /** The first page is read while the audience is checked, and the price and balance asked meanwhile. */
  preflightAtOnce: 'preflight-at-once',
  /** The default of chunk sends in flight rose from 4. */
  chunksInFlight8: 'chunks-in-flight-8',
  /** While sends wait for room, the next page is read. */
  readAheadWhileWaiting: 'read-ahead-while-waiting',
  /** A pause or cancel that came while a page was read holds that page's chunk back. */
  holdChunkReadWhileStopped: 'hold-chunk-read-while-stopped',
  /** A uniform campaign reads several chunks per page. */
  severalChunksPerPage: 'several-chunks-per-page',
  /** The default of messages awaiting an outcome rose from 5,000 to 10,000 (outcomes are told twice a second). */
  maxOutstanding10000: 'max-outstanding-10000',
  /** The first run keeps its input in the message store, for a retry to the failed. */
  keepInputForRetry: 'keep-input-for-retry',
  /** A campaign's provider calls carry its team as their fairness key. */
  teamFairnessKey: 'team-fairness-key',
} as const;
