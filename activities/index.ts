/**
 * The worker's activities, built by factories over injected clients (dependency injection, no globals),
 * grouped by the task queue they run on. A new feature adds its factory to one of the two groups.
 */
import type { Client } from '@temporalio/client';
import type { MessagingClient } from '../src/client/index.js';
import { createProviderActivities } from './provider.js';
import { createSubscriptionActivities } from './subscriptions.js';

export { createProviderActivities } from './provider.js';
export { createSubscriptionActivities } from './subscriptions.js';
export { FAILURE_TYPES } from './errors.js';

/** Activities that call the provider: they run on the rate-limited provider queue. */
export function createProviderQueueActivities(messaging: MessagingClient) {
  return {
    ...createProviderActivities(messaging),
  };
}

/** Activities that talk to Temporal or local resources: they run on the workflows' own queue. */
export function createWorkflowQueueActivities(temporal: Client) {
  return {
    ...createSubscriptionActivities(temporal),
  };
}
