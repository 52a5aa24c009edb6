/** Activity options shared by the workflows (their retry policies: retry-policies.ts). */
import type { ActivityOptions } from '@temporalio/workflow';
import { PROVIDER_RETRY, STORE_RETRY } from './retry-policies.js';

/** Provider calls: a charged call may take a while, a lost one is retried (see PROVIDER_RETRY). */
export const PROVIDER_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: PROVIDER_RETRY,
} satisfies ActivityOptions;

/**
 * A campaign's provider calls wait their team's turn at the request budget, which may take longer than a call
 * (a light team's chunks behind a heavy team's): the worker heartbeats while they wait and call
 * (src/temporal/request-classes.ts), so a lost worker is noticed by the heartbeat timeout, and the wait never
 * times an attempt out.
 */
export const BULK_PROVIDER_ACTIVITY_OPTIONS = {
  ...PROVIDER_ACTIVITY_OPTIONS,
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
} satisfies ActivityOptions;

/** Calls to msgflow's message store (see STORE_RETRY). */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: STORE_RETRY,
} satisfies ActivityOptions;
