/** Wallet balance and pricing. */
import { z } from 'zod';
import { Currency, MinorUnits } from './common.js';

export const Balance = z
  .looseObject({
    balance: MinorUnits,
    currency: Currency,
    spend_cap: MinorUnits.nullable().meta({ description: 'Monthly cap (UTC calendar month); null when none' }),
    spent_this_month: MinorUnits,
  })
  .meta({ id: 'Balance' });
export type Balance = z.infer<typeof Balance>;

export const Prices = z.looseObject({
  sms_segment: MinorUnits,
  otp: MinorUnits,
  voice_call: MinorUnits,
  lookup: MinorUnits,
  email_verification: MinorUnits,
});
export type Prices = z.infer<typeof Prices>;

export const Pricing = z.looseObject({ currency: Currency, prices: Prices }).meta({ id: 'Pricing' });
export type Pricing = z.infer<typeof Pricing>;
