/** GET /balance and GET /pricing (both under the balance scope). */
import type { Balance, Pricing } from '../../api/account.js';
import type { Handler } from '../http/pipeline.js';
import { spentThisMonth } from '../wallet.js';

export const balanceGet: Handler<'balanceGet'> = ({ ctx, account, now }): Balance => ({
  balance: account.balance,
  currency: account.currency,
  spend_cap: account.spend_cap,
  spent_this_month: spentThisMonth(ctx.db, account.id, now),
});

/** One price list for every account, read in the account's currency (minor units). */
export const pricingGet: Handler<'pricingGet'> = ({ ctx, account }): Pricing => ({
  currency: account.currency,
  prices: { ...ctx.options.prices },
});
