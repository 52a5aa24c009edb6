/**
 * msgflow's top-level commands, as `msgflow --help` lists them. Each one's module (with all it imports: the
 * Temporal client, the sandbox's server, the worker…) is loaded only when that command runs or shows its help.
 */
import type { Command } from 'commander';
import { addDevOptions } from './dev-options.js';

export interface TopLevelCommand {
  readonly name: string;
  readonly description: string;
  /** Options of the command itself (not of its subcommands), declared up front so `--help` shows them. */
  readonly addOptions?: (command: Command) => void;
  /** Imports the command's module; what it returns adds the subcommands and actions. */
  readonly load: () => Promise<(command: Command) => void>;
}

export const COMMANDS: readonly TopLevelCommand[] = [
  {
    name: 'dev',
    description: 'Run the whole stack locally: Temporal dev server + UI, sandbox, ingress and worker',
    addOptions: addDevOptions,
    load: async () => (await import('./dev.js')).registerDevCommands,
  },
  {
    name: 'sms',
    description: 'Send SMS through the sendSms workflow',
    load: async () => (await import('./sms.js')).registerSmsCommands,
  },
  {
    name: 'campaign',
    description: 'SMS campaigns of any size (the smsCampaign workflow)',
    load: async () => {
      const [{ registerCampaignCommands }, { addCampaignRetryCommand }] = await Promise.all([
        import('./campaign.js'),
        import('./campaign-retry.js'),
      ]);
      return (command) => {
        registerCampaignCommands(command);
        addCampaignRetryCommand(command);
      };
    },
  },
  {
    name: 'message',
    description: 'One provider message, as the message store knows it',
    load: async () => (await import('./reports.js')).registerMessageCommands,
  },
  {
    name: 'schedule',
    description: 'Scheduled reminder campaigns (Temporal Schedules that start smsCampaign)',
    load: async () => (await import('./schedule.js')).registerScheduleCommands,
  },
  {
    name: 'suppression',
    description:
      'The suppression list (opt-outs) in the message store: campaigns and sendSms never send to a number on it',
    load: async () => (await import('./suppression.js')).registerSuppressionCommands,
  },
  {
    name: 'data',
    description: "Personal data kept by msgflow: erase one person's number",
    load: async () => (await import('./suppression.js')).registerDataCommands,
  },
  {
    name: 'worker',
    description: 'Run the msgflow worker (workflows + provider activities); Ctrl-C stops it gracefully',
    load: async () => (await import('./worker.js')).registerWorkerCommands,
  },
  {
    name: 'deployment',
    description: "The workers' Temporal Worker Deployment: per build, runs still on it and whether it may stop",
    load: async () => (await import('./deployment.js')).registerDeploymentCommands,
  },
  {
    name: 'ingress',
    description: 'Run the webhook ingress: verifies signed status events and signals their workflows',
    load: async () => (await import('./ingress.js')).registerIngressCommands,
  },
  {
    name: 'sandbox',
    description: "Run the provider sandbox (the default), or manage a running one's accounts",
    load: async () => (await import('./sandbox.js')).registerSandboxCommands,
  },
  {
    name: 'temporal',
    description: 'Temporal CLI, dev server and cluster setup',
    load: async () => (await import('./temporal.js')).registerTemporalCommands,
  },
  {
    name: 'codec',
    description: 'Payload encryption: the codec endpoint for the Temporal UI/CLI, key and token generators',
    load: async () => (await import('./codec.js')).registerCodecCommands,
  },
  {
    name: 'otp',
    description: 'One-time passwords: durable send-then-verify sessions',
    load: async () => (await import('./otp.js')).registerOtpCommands,
  },
  {
    name: 'voice',
    description: 'Voice calls through the voiceCall workflow',
    load: async () => (await import('./voice.js')).registerVoiceCommands,
  },
];

/**
 * The top-level command that `args` (the arguments after `msgflow`) run or ask help for: `sms send …`,
 * `sms --help`, `help sms`. None for `--help`, `--version` or an unknown name. msgflow's own options take no
 * value, so the first argument that is not an option names the command.
 */
export function commandNamedIn(args: readonly string[]): TopLevelCommand | undefined {
  const operands = args.filter((arg) => !arg.startsWith('-'));
  const name = operands[0] === 'help' ? operands[1] : operands[0];
  return COMMANDS.find((command) => command.name === name);
}

/** Adds every top-level command to `program`, complete for the one `args` names, name and description for others. */
export async function addCommands(program: Command, args: readonly string[]): Promise<void> {
  const named = commandNamedIn(args);
  for (const entry of COMMANDS) {
    const command = program.command(entry.name).description(entry.description);
    entry.addOptions?.(command);
    if (entry === named) (await entry.load())(command);
  }
}
