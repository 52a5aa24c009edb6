import type { Command } from 'commander';
import { startIngressFromEnv } from '../ingress/from-env.js';
import { createLogger } from '../log.js';
import { listening } from './busy-port.js';
import { untilStopSignal } from './signals.js';

export function registerIngressCommands(ingress: Command): void {
  ingress.action(async () => {
    const log = createLogger('ingress');
    const ingress = await listening(startIngressFromEnv(process.env, log), 'ingress', 'MSGFLOW_INGRESS_PORT');
    log.info('ingress listening', { webhookUrl: ingress.webhookUrl });
    console.log(`ingress: ${ingress.webhookUrl}`);
    await untilStopSignal();
    await ingress.close();
  });
}
