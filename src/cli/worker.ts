import type { Command } from 'commander';
import { createLogger } from '../log.js';
import { createMsgflowWorkerFromEnv } from '../worker.js';

export function registerWorkerCommands(command: Command): void {
  command.action(async () => {
    const log = createLogger('worker');
    const worker = await createMsgflowWorkerFromEnv();
    const { versioning } = worker;
    log.info(
      'worker running',
      versioning
        ? { deployment: versioning.deploymentName, buildId: versioning.buildId, makeCurrent: versioning.makeCurrent }
        : { versioning: 'off' },
    );
    void worker.routed.then(
      (outcome) => {
        if (outcome === 'made-current')
          log.info('build made current', { deployment: versioning?.deploymentName, buildId: versioning?.buildId });
      },
      () => undefined,
    );
    // The SDK's runtime shuts workers down gracefully on SIGINT/SIGTERM; run() resolves when they are done.
    await worker.run();
    log.info('worker stopped');
  });
}
