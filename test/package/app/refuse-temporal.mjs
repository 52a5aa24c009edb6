// `node --import ./refuse-temporal.mjs …`: any import of an @temporalio package fails.
import { register } from 'node:module';

register('./refuse-temporal-hooks.mjs', import.meta.url);
