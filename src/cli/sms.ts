import type { Command } from 'commander';
import { parseEnv, TemporalEnv, WorkerEnv } from '../config.js';
import { Msgflow } from '../starter/index.js';
import { connectClient } from '../temporal/connection.js';

interface SmsSendOptions {
  to: string;
  sender: string;
  message: string;
  key?: string;
  wait?: boolean;
  waitWindow?: string;
}

export function registerSmsCommands(program: Command): void {
  const sms = program.command('sms').description('Send SMS through the sendSms workflow');
  sms
    .command('send')
    .description('Send one text to one or a few recipients')
    .requiredOption('--to <numbers>', 'recipients, comma-separated, international digits (e.g. 2348012345678)')
    .requiredOption('--sender <id>', 'approved sender id')
    .requiredOption('--message <text>', 'text to send')
    .option('--key <key>', 'idempotency key: the same key never sends twice')
    .option('--wait', "wait for and print each recipient's final status")
    .option('--wait-window <seconds>', 'how long to wait for a status event before asking the provider')
    .action(async (options: SmsSendOptions) => {
      const temporalEnv = parseEnv(TemporalEnv, process.env);
      const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
      const client = await connectClient(temporalEnv);
      try {
        const msgflow = new Msgflow(client, MSGFLOW_TASK_QUEUE);
        const started = await msgflow.sendSms(
          {
            recipients: options.to.split(',').map((n) => n.trim().replace(/^\+/, '')),
            sender: options.sender,
            message: options.message,
            waitWindowMs: options.waitWindow ? Number(options.waitWindow) * 1000 : undefined,
          },
          { key: options.key },
        );
        console.log(`workflow ${started.workflowId}`);
        if (options.wait) {
          const result = await started.result();
          for (const m of result.messages) console.log(`${m.mobile_number}  ${m.status}  ${m.provider_message_id}`);
        }
      } finally {
        await client.connection.close();
      }
    });
}
