/**
 * The message store over either dialect, composed of its parts (each a concern with its own tables), all
 * over the one driver `openMessageStore` opened: the SQL is shared, `driver.ts` hides the differences.
 */
import { campaignInputStore } from './campaign-inputs.js';
import type { Driver } from './driver.js';
import { SqlOtpEvents } from './otp-events.js';
import { sqlOutbox } from './outbox.js';
import type { PersonalData } from './personal-data.js';
import { providerFinals } from './provider-finals.js';
import { reportsAndRejected } from './reports.js';
import { requestBuckets } from './request-bucket.js';
import { retention } from './retention.js';
import type { StoreContext } from './sql.js';
import { suppressionsAndErasure } from './suppressions.js';
import type { MessageStore, StoreHooks } from './types.js';
import { waitersAndOutcomes } from './waiters.js';

export function sqlMessageStore(driver: Driver, personal: PersonalData, hooks: StoreHooks = {}): MessageStore {
  const context: StoreContext = { driver, personal, hooks };
  return {
    dialect: driver.dialect,
    ...waitersAndOutcomes(context),
    ...providerFinals(context),
    ...reportsAndRejected(context),
    ...suppressionsAndErasure(context),
    ...retention(context),
    ...requestBuckets(context),
    otp: new SqlOtpEvents(driver, personal),
    outbox: sqlOutbox(context),
    campaignInputs: campaignInputStore(context),
    close: () => driver.close(),
  };
}
