/**
 * The worker's activities, built by factories over injected clients (dependency injection, no globals),
 * grouped by the task queue they run on. A new feature adds its factory to one of the two groups.
 */
import type { MessagingClient } from '../src/client/client.js';
import type { KeyRing } from '../src/crypto/keyring.js';
import type { MessageStore } from '../src/store/index.js';
import { createContactActivities } from './contacts.js';
import type { OtpGuardConfig } from '../src/api/otp-guard.js';
import { createOtpActivities } from './otp.js';
import { createAudienceActivities } from './audience.js';
import type { AudienceAccess } from '../src/audience/access.js';
import type { AudienceLoaders } from '../src/audience/loaders.js';
import { createCampaignProviderActivities } from './campaign.js';
import { createCampaignInputActivities, withBuiltInLoaders } from './campaign-inputs.js';
import { createMessageStoreActivities } from './message-store.js';
import { createProviderActivities } from './provider.js';
import { createSuppressionActivities } from './suppression.js';
import { createVoiceActivities } from './voice.js';

/**
 * Secrets and resources provider activities need. `otpKeyRing` opens sealed OTP codes (without it, OTP
 * verification fails); `audienceLoaders` and `audienceAccess` let a personal campaign's request re-read its page
 * to render its text.
 */
export interface ProviderActivitySecrets {
  otpKeyRing?: KeyRing;
  /** The OTP fraud guard's rules (default DEFAULT_OTP_GUARD; null: no guard, no OTP record). */
  otpGuard?: OtpGuardConfig | null;
  audienceLoaders?: AudienceLoaders;
  audienceAccess?: AudienceAccess;
}

/**
 * Activities that call the provider: they run on the rate-limited provider queue. Those that send record
 * the new messages in `store`, awaited by their workflow, before they complete.
 */
export function createProviderQueueActivities(
  messaging: MessagingClient,
  store: MessageStore,
  secrets: ProviderActivitySecrets = {},
) {
  return {
    ...createProviderActivities(messaging, store),
    ...createCampaignProviderActivities(
      messaging,
      store,
      withBuiltInLoaders(secrets.audienceLoaders, store),
      secrets.audienceAccess,
    ),
    ...createOtpActivities(messaging, store, { keyRing: secrets.otpKeyRing, guard: secrets.otpGuard }),
    ...createVoiceActivities(messaging, store),
    ...createContactActivities(messaging),
  };
}

/**
 * What workflow-queue activities need beyond the message store: user audience loaders, by name, and the
 * folders and hosts audiences may be read from.
 */
export interface WorkflowQueueActivityOptions {
  audienceLoaders?: AudienceLoaders;
  audienceAccess?: AudienceAccess;
}

/** Activities over the message store and local resources: they run on the workflows' own queue. */
export function createWorkflowQueueActivities(store: MessageStore, options: WorkflowQueueActivityOptions = {}) {
  return {
    ...createMessageStoreActivities(store),
    ...createSuppressionActivities(store),
    ...createCampaignInputActivities(store),
    ...createAudienceActivities({
      loaders: withBuiltInLoaders(options.audienceLoaders, store),
      access: options.audienceAccess,
    }),
  };
}
