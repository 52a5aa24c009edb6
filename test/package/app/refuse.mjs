// `REFUSE=name,… node --import ./refuse.mjs …`: importing any of the named packages (or their subpaths) fails;
// a name ending in `/` refuses every package of that scope.
import { register } from 'node:module';

register('./refuse-hooks.mjs', import.meta.url, { data: (process.env.REFUSE ?? '').split(',').filter(Boolean) });
