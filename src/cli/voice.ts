/** `msgflow voice call`: a text-to-speech call through the voiceCall workflow, optionally followed to its end. */
import type { Command } from 'commander';
import { parseEnv, TemporalEnv, WorkerEnv } from '../config.js';
import { Msgflow } from '../starter/index.js';
import { connectClient } from '../temporal/connection.js';

interface VoiceCallOptions {
  to: string;
  message: string;
  sender?: string;
  language?: string;
  repeat?: string;
  deadline?: string;
  key?: string;
  wait?: boolean;
}

export function registerVoiceCommands(program: Command): void {
  const voice = program.command('voice').description('Voice calls through the voiceCall workflow');
  voice
    .command('call')
    .description('Place a text-to-speech call and follow it to its final state')
    .requiredOption('--to <number>', 'recipient, international digits (e.g. 2348012345678)')
    .requiredOption('--message <text>', 'text read out to the recipient')
    .option('--sender <id>', 'approved caller id')
    .option('--language <tag>', 'e.g. en-US (default)')
    .option('--repeat <n>', 'times the message is read (1-3)')
    .option('--deadline <seconds>', 'how long to follow the call before reporting its last state (default 600)')
    .option('--key <key>', 'idempotency key: the same key never calls twice')
    .option('--wait', 'wait for and print the final state')
    .action(async (options: VoiceCallOptions) => {
      const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, process.env);
      const client = await connectClient(parseEnv(TemporalEnv, process.env));
      try {
        const msgflow = new Msgflow(client, MSGFLOW_TASK_QUEUE);
        const started = await msgflow.startVoiceCall(
          {
            recipient: options.to.trim().replace(/^\+/, ''),
            message: options.message,
            sender: options.sender,
            language: options.language,
            repeat: options.repeat === undefined ? undefined : Number(options.repeat),
            deadlineMs: options.deadline === undefined ? undefined : Number(options.deadline) * 1000,
          },
          { key: options.key },
        );
        console.log(`workflow ${started.workflowId}`);
        if (options.wait) {
          const result = await started.result();
          console.log(
            `${result.callId}  ${result.status}${result.final ? '' : ' (not final at the deadline)'}  ${result.durationSeconds}s  cost ${result.cost} ${result.currency}`,
          );
        }
      } finally {
        await client.connection.close();
      }
    });
}
