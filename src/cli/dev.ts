/**
 * `msgflow dev`: the whole stack on embedded defaults — Temporal dev server (UI on 8233, state in .data/),
 * the sandbox, the ingress registered as the sandbox's webhook, and the worker. Writes .data/dev.env so
 * other commands find it, and stops everything in order on Ctrl-C.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseEnv as parseDotenv } from 'node:util';
import type { Command } from 'commander';
import { DATA_DIR, DEV_ENV_FILE, parseEnv, SandboxEnv, WorkerEnv } from '../config.js';
import { createLogger } from '../log.js';
import { startStack } from '../stack.js';
import { ensureTemporal } from '../temporal/dev-server.js';
import { untilStopSignal } from './signals.js';

interface DevOptions {
  temporalPort: string;
  uiPort: string;
  sandboxPort: string;
  ingressPort: string;
}

export function registerDevCommands(program: Command): void {
  program
    .command('dev')
    .description('Run the whole stack locally: Temporal dev server + UI, sandbox, ingress and worker')
    .option('--temporal-port <port>', 'Temporal frontend port', '7233')
    .option('--ui-port <port>', 'Temporal UI port', '8233')
    .option('--sandbox-port <port>', 'sandbox port', '4010')
    .option('--ingress-port <port>', 'ingress port', '4020')
    .action(async (options: DevOptions) => {
      const log = createLogger('dev');
      mkdirSync(DATA_DIR, { recursive: true });
      const previous = existsSync(DEV_ENV_FILE) ? parseDotenv(readFileSync(DEV_ENV_FILE, 'utf8')) : {};
      const sandboxEnv = parseEnv(SandboxEnv, process.env);
      const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);

      console.log('starting Temporal…');
      const temporal = await ensureTemporal(process.env, {
        port: Number(options.temporalPort),
        uiPort: Number(options.uiPort),
        dbFile: `${DATA_DIR}/temporal.db`,
      });
      const stack = await startStack({
        temporal,
        taskQueue: MSGFLOW_TASK_QUEUE,
        sandbox: {
          host: '127.0.0.1',
          port: Number(options.sandboxPort),
          db: sandboxEnv.MSGFLOW_SANDBOX_DB,
          adminToken: sandboxEnv.MSGFLOW_SANDBOX_ADMIN_TOKEN ?? previous.MSGFLOW_SANDBOX_ADMIN_TOKEN,
        },
        ingress: { port: Number(options.ingressPort) },
        reuseToken: previous.MSGFLOW_API_TOKEN,
        logger: log,
      }).catch(async (error: unknown) => {
        await temporal.stop();
        throw error;
      });

      const settings = {
        TEMPORAL_ADDRESS: temporal.address,
        TEMPORAL_NAMESPACE: temporal.namespace,
        MSGFLOW_TASK_QUEUE,
        MSGFLOW_API_BASE_URL: stack.sandbox.baseUrl,
        MSGFLOW_API_TOKEN: stack.token,
        MSGFLOW_SANDBOX_URL: stack.sandbox.url,
        MSGFLOW_SANDBOX_ADMIN_TOKEN: stack.sandbox.adminToken,
        MSGFLOW_WEBHOOK_SECRETS: stack.webhookSecret,
      };
      writeFileSync(DEV_ENV_FILE, `${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n')}\n`, { mode: 0o600 });

      console.log(
        [
          '',
          'msgflow dev is running:',
          `  Temporal      ${temporal.address}   (namespace ${temporal.namespace})`,
          `  Temporal UI   ${temporal.uiUrl ?? '(external server)'}`,
          `  Sandbox API   ${stack.sandbox.baseUrl}`,
          `  Ingress       ${stack.ingress.webhookUrl}`,
          `  Settings      ${DEV_ENV_FILE} (read by the other msgflow commands)`,
          '',
          'Try: npm run msgflow -- sms send --to 2348012345678 --sender ACME --message "hi" --wait',
          'Ctrl-C stops everything.',
        ].join('\n'),
      );

      await Promise.race([untilStopSignal(), stack.workerRun]);
      console.log('stopping…');
      await stack.close();
      await temporal.stop();
    });
}
