import type { Command } from 'commander';
import { startIngressFromEnv } from '../ingress/from-env.js';
import { createLogger } from '../log.js';
import { untilStopSignal } from './signals.js';

export function registerIngressCommands(ingress: Command): void {
  ingress.action(async () => {
    const log = createLogger('ingress');
    const ingress = await startIngressFromEnv(process.env, log);
    log.info('ingress listening', { webhookUrl: ingress.webhookUrl });
    console.log(`ingress: ${ingress.webhookUrl}`);
    await untilStopSignal();
    await ingress.close();
  });
}
