/** Activity options shared by the workflows (their retry policies: retry-policies.ts). */
import type { ActivityOptions } from '@temporalio/workflow';
import { PROVIDER_RETRY, STORE_RETRY } from './retry-policies.js';

/** Provider calls: a charged call may take a while, a lost one is retried (see PROVIDER_RETRY). */
export const PROVIDER_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: PROVIDER_RETRY,
} satisfies ActivityOptions;

/** Calls to msgflow's message store (see STORE_RETRY). */
export const STORE_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '1 minute',
  retry: STORE_RETRY,
} satisfies ActivityOptions;
