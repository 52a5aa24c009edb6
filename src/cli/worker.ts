import type { Command } from 'commander';
import { createLogger } from '../log.js';
import { createMsgflowWorkerFromEnv } from '../worker.js';

export function registerWorkerCommands(command: Command): void {
  command.action(async () => {
    const log = createLogger('worker');
    const worker = await createMsgflowWorkerFromEnv();
    log.info('worker running');
    // The SDK's runtime shuts workers down gracefully on SIGINT/SIGTERM; run() resolves when they are done.
    await worker.run();
    log.info('worker stopped');
  });
}
