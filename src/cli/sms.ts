/** `msgflow sms send`: one text to one or a few recipients through the sendSms workflow. */
import type { Command } from 'commander';
import { parseEnv, WorkerEnv } from '../config.js';
import { Msgflow } from '../starter/index.js';
import { withClient } from './client.js';
import { duration, type JsonFlag, printStarted, started, withJson } from './common.js';

interface SmsSendOptions extends JsonFlag {
  to: string;
  sender: string;
  message: string;
  key?: string;
  wait?: boolean;
  waitWindow?: number;
}

export function registerSmsCommands(sms: Command): void {
  withJson(
    sms
      .command('send')
      .description('Send one text to one or a few recipients')
      .requiredOption('--to <numbers>', 'recipients, comma-separated, international digits (e.g. 2348012345678)')
      .requiredOption('--sender <id>', 'approved sender id')
      .requiredOption('--message <text>', 'text to send')
      .option('--key <key>', 'idempotency key: the same key never sends twice')
      .option('--wait', "wait for and print each recipient's final status")
      .option(
        '--wait-window <duration>',
        'how long to wait for a status event before asking the provider, e.g. 30s or 10m',
        duration,
      ),
  ).action(async (options: SmsSendOptions) => {
    const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
    await withClient(async (client) => {
      const msgflow = new Msgflow(client, MSGFLOW_TASK_QUEUE);
      const sms = await started(
        msgflow.sendSms(
          {
            recipients: options.to.split(',').map((n) => n.trim().replace(/^\+/, '')),
            sender: options.sender,
            message: options.message,
            waitWindowMs: options.waitWindow,
          },
          { key: options.key },
        ),
      );
      await printStarted(options, sms, (result) => [
        ...result.messages.map((m) => `${m.mobile_number}  ${m.status}  ${m.provider_message_id}`),
        ...result.suppressed.map((number) => `${number}  suppressed (opted out: not sent, not charged)`),
        ...(result.duplicates ?? []).map((number) => `${number}  given more than once: sent and charged once`),
      ]);
    });
  });
}
