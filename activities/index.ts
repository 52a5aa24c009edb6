/** The worker's activities, built by factories over injected clients (dependency injection, no globals). */
import type { Client } from '@temporalio/client';
import type { MessagingClient } from '../src/client/index.js';
import { createProviderActivities } from './provider.js';
import { createSubscriptionActivities } from './subscriptions.js';

export { createProviderActivities } from './provider.js';
export { createSubscriptionActivities } from './subscriptions.js';
export { FAILURE_TYPES } from './errors.js';

export interface ActivityDependencies {
  /** Provider client; the worker creates it with in-process retries off, so Temporal owns every retry. */
  messaging: MessagingClient;
  temporal: Client;
}

export function createActivities({ messaging, temporal }: ActivityDependencies) {
  return {
    provider: createProviderActivities(messaging),
    temporal: createSubscriptionActivities(temporal),
  };
}
