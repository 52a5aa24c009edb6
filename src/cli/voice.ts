/** `msgflow voice call`: a text-to-speech call through the voiceCall workflow, optionally followed to its end. */
import type { Command } from 'commander';
import { parseEnv, WorkerEnv } from '../config.js';
import { Msgflow } from '../starter/index.js';
import { withClient } from './client.js';
import { duration, type JsonFlag, positiveInt, printStarted, started, withJson } from './common.js';

interface VoiceCallOptions extends JsonFlag {
  to: string;
  message: string;
  sender?: string;
  language?: string;
  repeat?: number;
  deadline?: number;
  key?: string;
  wait?: boolean;
}

export function registerVoiceCommands(voice: Command): void {
  withJson(
    voice
      .command('call')
      .description('Place a text-to-speech call and follow it to its final state')
      .requiredOption('--to <number>', 'recipient, international digits (e.g. 2348012345678)')
      .requiredOption('--message <text>', 'text read out to the recipient')
      .option('--sender <id>', 'approved caller id')
      .option('--language <tag>', 'e.g. en-US (default)')
      .option('--repeat <n>', 'times the message is read (1-3)', positiveInt('--repeat'))
      .option(
        '--deadline <duration>',
        'how long to follow the call before reporting its last state, e.g. 5m (default 10m)',
        duration,
      )
      .option('--key <key>', 'idempotency key: the same key never calls twice')
      .option('--wait', 'wait for and print the final state'),
  ).action(async (options: VoiceCallOptions) => {
    const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
    await withClient(async (client) => {
      const msgflow = new Msgflow(client, MSGFLOW_TASK_QUEUE);
      const call = await started(
        msgflow.startVoiceCall(
          {
            recipient: options.to.trim().replace(/^\+/, ''),
            message: options.message,
            sender: options.sender,
            language: options.language,
            repeat: options.repeat,
            deadlineMs: options.deadline,
          },
          { key: options.key },
        ),
      );
      await printStarted(
        options,
        call,
        (result) =>
          `${result.callId}  ${result.status}${result.final ? '' : ' (not final at the deadline)'}  ${result.durationSeconds}s  cost ${result.cost} ${result.currency}`,
      );
    });
  });
}
