/**
 * The worker's activities, built by factories over injected clients (dependency injection, no globals),
 * grouped by the task queue they run on. A new feature adds its factory to one of the two groups.
 */
import type { Client } from '@temporalio/client';
import type { MessagingClient } from '../src/client/client.js';
import type { KeyRing } from '../src/crypto/keyring.js';
import { createContactActivities } from './contacts.js';
import { createOtpActivities } from './otp.js';
import { createAudienceActivities } from './audience.js';
import type { AudienceLoaders } from './audience-loaders.js';
import { createCampaignProviderActivities } from './campaign.js';
import { createProviderActivities } from './provider.js';
import { createSubscriptionActivities } from './subscriptions.js';
import { createVoiceActivities } from './voice.js';

/** Secrets provider activities need. `otpKeyRing` opens sealed OTP codes (without it, OTP verification fails). */
export interface ProviderActivitySecrets {
  otpKeyRing?: KeyRing;
}

/** Activities that call the provider: they run on the rate-limited provider queue. */
export function createProviderQueueActivities(messaging: MessagingClient, secrets: ProviderActivitySecrets = {}) {
  return {
    ...createProviderActivities(messaging),
    ...createCampaignProviderActivities(messaging),
    ...createOtpActivities(messaging, secrets.otpKeyRing),
    ...createVoiceActivities(messaging),
    ...createContactActivities(messaging),
  };
}

/** What workflow-queue activities need beyond the Temporal client: user audience loaders, by name. */
export interface WorkflowQueueActivityOptions {
  audienceLoaders?: AudienceLoaders;
}

/** Activities that talk to Temporal or local resources: they run on the workflows' own queue. */
export function createWorkflowQueueActivities(temporal: Client, options: WorkflowQueueActivityOptions = {}) {
  return {
    ...createSubscriptionActivities(temporal),
    ...createAudienceActivities({ loaders: options.audienceLoaders }),
  };
}
