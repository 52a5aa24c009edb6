/**
 * `msgflow sandbox`: runs the provider sandbox, and small admin helpers that talk to a running one
 * (MSGFLOW_SANDBOX_URL, MSGFLOW_SANDBOX_ADMIN_TOKEN). Every start flag is also an environment variable,
 * declared and validated in src/config.ts (SandboxEnv); a flag wins over its variable.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { type DeliveryRecord, DeliveryState, type ForcedOutcome, ForcedOutcomeRequest } from '../api/admin.js';
import { formatDuration } from '../api/duration.js';
import { SCOPES, type Scope } from '../api/scopes.js';
import { ConfigError, SandboxEnv } from '../config.js';
import { detailsOf } from '../api/errors.js';
import { DEFAULTS } from '../sandbox/options.js';
import { SandboxAdmin, SandboxAdminError, type SandboxOptions, startSandbox } from '../sandbox/index.js';
import { listening } from './busy-port.js';
import { duration, fail, type JsonFlag, positiveInt, printResult, withJson } from './common.js';
import { untilStopSignal } from './signals.js';

const ACCOUNT_HELP = 'account id (default: MSGFLOW_SANDBOX_ACCOUNT, which msgflow dev writes to .data/dev.env)';

/** `--account`, else the dev stack's account; a command without either stops naming both. */
function defaultAccount(): string {
  const account = SandboxEnv.shape.MSGFLOW_SANDBOX_ACCOUNT.safeParse(process.env.MSGFLOW_SANDBOX_ACCOUNT);
  if (account.success && account.data) return account.data;
  return fail(
    'give --account <id>: no MSGFLOW_SANDBOX_ACCOUNT is set (msgflow dev writes its account to .data/dev.env; `msgflow sandbox account create` makes one)',
    2,
  );
}

/** Start flags and the variable each one overrides. */
const START_FLAGS = [
  ['--port <port>', 'MSGFLOW_SANDBOX_PORT', `TCP port, 0 for any free one (default ${DEFAULTS.port})`],
  ['--host <host>', 'MSGFLOW_SANDBOX_HOST', `interface to bind (default ${DEFAULTS.host})`],
  ['--db <path>', 'MSGFLOW_SANDBOX_DB', `SQLite file, or :memory: (default ${DEFAULTS.db})`],
  [
    '--admin-token <token>',
    'MSGFLOW_SANDBOX_ADMIN_TOKEN',
    'admin API token, at least 16 characters (default: generated and printed)',
  ],
  [
    '--trust-proxy <value>',
    'MSGFLOW_SANDBOX_TRUST_PROXY',
    'Express trust proxy: true, a hop count, or addresses such as loopback (default false)',
  ],
  [
    '--tick <duration>',
    'MSGFLOW_SANDBOX_TICK',
    `how often due carrier moves and webhooks are processed (default ${formatDuration(DEFAULTS.tickMs)})`,
  ],
  [
    '--send-latency <duration>',
    'MSGFLOW_SANDBOX_SEND_LATENCY',
    `processing time of a charged send (default ${formatDuration(DEFAULTS.sendLatencyMs)})`,
  ],
  [
    '--carrier-submit <duration>',
    'MSGFLOW_SANDBOX_CARRIER_SUBMIT',
    `SMS queued -> sent (default ${formatDuration(DEFAULTS.carrier.submitMs)})`,
  ],
  [
    '--carrier-final <duration>',
    'MSGFLOW_SANDBOX_CARRIER_FINAL',
    `SMS sent -> final state (default ${formatDuration(DEFAULTS.carrier.finalMs)})`,
  ],
  [
    '--voice-step <duration>',
    'MSGFLOW_SANDBOX_VOICE_STEP',
    `each step of a voice call (default ${formatDuration(DEFAULTS.carrier.voiceStepMs)})`,
  ],
  [
    '--webhook-retry <durations>',
    'MSGFLOW_SANDBOX_WEBHOOK_RETRY',
    `retry delays, comma-separated (default ${DEFAULTS.webhooks.retryScheduleMs.map(formatDuration).join(',')})`,
  ],
  [
    '--webhook-timeout <duration>',
    'MSGFLOW_SANDBOX_WEBHOOK_TIMEOUT',
    `per-attempt timeout (default ${formatDuration(DEFAULTS.webhooks.timeoutMs)})`,
  ],
  [
    '--webhook-batch-max <n>',
    'MSGFLOW_SANDBOX_WEBHOOK_BATCH_MAX',
    `most events in one batch body (default ${DEFAULTS.webhooks.batchMax})`,
  ],
  [
    '--webhook-duplicate <p>',
    'MSGFLOW_SANDBOX_WEBHOOK_DUPLICATE',
    'chaos: probability 0..1 of delivering a webhook twice (default 0)',
  ],
  [
    '--webhook-max-delay <duration>',
    'MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY',
    'chaos: random hold-back of first attempts, reorders them (default 0)',
  ],
  [
    '--rate-limit <n>',
    'MSGFLOW_SANDBOX_RATE_LIMIT',
    `requests per minute per token (default ${DEFAULTS.defaultRatePerMinute})`,
  ],
  [
    '--otp-ip-limit <n>',
    'MSGFLOW_SANDBOX_OTP_IP_LIMIT',
    `OTP sends per minute per source IP (default ${DEFAULTS.otpPerIpPerMinute})`,
  ],
  [
    '--body-limit-bytes <n>',
    'MSGFLOW_SANDBOX_BODY_LIMIT_BYTES',
    `largest request body (default ${DEFAULTS.bodyLimitBytes})`,
  ],
  ['--prices <list>', 'MSGFLOW_SANDBOX_PRICES', 'prices in minor units, e.g. sms_segment=3,otp=5'],
] as const;

type Flags = Record<string, string | undefined>;

/** Flags over environment, validated once by SandboxEnv; errors name both the flag and the variable. */
export function sandboxOptionsFrom(flags: Flags, env: NodeJS.ProcessEnv = process.env): SandboxOptions {
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [flag, variable] of START_FLAGS) {
    const value = flags[camelCase(flag)];
    if (value !== undefined) merged[variable] = value;
  }
  const result = SandboxEnv.safeParse(merged);
  if (!result.success) {
    const problems = detailsOf(result.error).map((d) => {
      const flag = START_FLAGS.find(([, variable]) => variable === d.path.split('.')[0])?.[0].split(' ')[0];
      return `  ${flag ? `${flag} / ` : ''}${d.path}: ${d.message}`;
    });
    throw new ConfigError(`Invalid sandbox settings:\n${problems.join('\n')}`);
  }
  const e = result.data;
  const chaos =
    e.MSGFLOW_SANDBOX_WEBHOOK_DUPLICATE !== undefined || e.MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY !== undefined
      ? {
          duplicateProbability: e.MSGFLOW_SANDBOX_WEBHOOK_DUPLICATE,
          maxExtraDelayMs: e.MSGFLOW_SANDBOX_WEBHOOK_MAX_DELAY,
        }
      : undefined;
  return definedOnly({
    port: e.MSGFLOW_SANDBOX_PORT,
    host: e.MSGFLOW_SANDBOX_HOST,
    db: e.MSGFLOW_SANDBOX_DB,
    adminToken: e.MSGFLOW_SANDBOX_ADMIN_TOKEN,
    trustProxy: e.MSGFLOW_SANDBOX_TRUST_PROXY,
    tickMs: e.MSGFLOW_SANDBOX_TICK,
    sendLatencyMs: e.MSGFLOW_SANDBOX_SEND_LATENCY,
    carrier: definedOnly({
      submitMs: e.MSGFLOW_SANDBOX_CARRIER_SUBMIT,
      finalMs: e.MSGFLOW_SANDBOX_CARRIER_FINAL,
      voiceStepMs: e.MSGFLOW_SANDBOX_VOICE_STEP,
    }),
    webhooks: definedOnly({
      retryScheduleMs: e.MSGFLOW_SANDBOX_WEBHOOK_RETRY,
      timeoutMs: e.MSGFLOW_SANDBOX_WEBHOOK_TIMEOUT,
      batchMax: e.MSGFLOW_SANDBOX_WEBHOOK_BATCH_MAX,
      chaos: chaos && definedOnly(chaos),
    }),
    defaultRatePerMinute: e.MSGFLOW_SANDBOX_RATE_LIMIT,
    otpPerIpPerMinute: e.MSGFLOW_SANDBOX_OTP_IP_LIMIT,
    bodyLimitBytes: e.MSGFLOW_SANDBOX_BODY_LIMIT_BYTES,
    prices: e.MSGFLOW_SANDBOX_PRICES && definedOnly(e.MSGFLOW_SANDBOX_PRICES),
  });
}

export function registerSandboxCommands(sandbox: Command): void {
  // Every helper that takes --account defaults to the dev stack's account.
  sandbox.hook('preAction', (_sandbox, command) => {
    if (command.options.some((o) => o.long === '--account') && command.getOptionValue('account') === undefined)
      command.setOptionValue('account', defaultAccount());
  });

  const start = sandbox
    .command('start', { isDefault: true })
    .description('Start the sandbox (a stateful Messaging API v1)');
  for (const [flag, variable, description] of START_FLAGS)
    start.addOption(new Option(flag, `${description} [${variable}]`));
  start.action(async (flags: Flags) => {
    const running = await listening(
      startSandbox(sandboxOptionsFrom(flags)),
      'sandbox',
      '--port or MSGFLOW_SANDBOX_PORT',
    );
    console.log(`sandbox: ${running.baseUrl}`);
    console.log(`sandbox console: ${running.consoleUrl} (one-time sign-in link: ${running.consoleSignInLink()})`);
    if (running.adminTokenGenerated) console.log(`sandbox admin token: ${running.adminToken}`);
    await untilStopSignal();
    await running.close();
  });

  const account = sandbox.command('account').description('Accounts');
  withJson(
    account
      .command('create')
      .description('Create an account')
      .requiredOption('--name <name>', 'account name')
      .option('--balance <minor units>', 'opening balance', integer)
      .option('--currency <code>', 'ISO 4217 currency (default USD)'),
  ).action(async ({ json, ...o }: JsonFlag & { name: string; balance?: number; currency?: string }) => {
    const created = await adminFromEnv().createAccount(definedOnly(o)).catch(explain);
    printResult(
      { json },
      created,
      () => `account ${created.id} "${created.name}": balance ${created.balance} ${created.currency}`,
    );
  });

  const token = sandbox.command('token').description('API tokens');
  withJson(
    token
      .command('create')
      .description('Create an API token (its secret is printed once)')
      .option('--account <id>', ACCOUNT_HELP)
      .requiredOption('--scopes <list>', `comma-separated: ${SCOPES.join(',')}`, scopeList)
      .option('--name <name>', 'a label'),
  ).action(async (o: JsonFlag & { account: string; scopes: Scope[]; name?: string }) => {
    const created = await adminFromEnv()
      .createToken(o.account, definedOnly({ scopes: o.scopes, name: o.name }))
      .catch(explain);
    printResult(o, created, () => [
      `token ${created.id} (${created.scopes.join(',')}); its secret, shown this once:`,
      created.token,
    ]);
  });
  withJson(
    token
      .command('list')
      .description("An account's tokens: prefix, scopes, created, last used, revoked (never secrets)")
      .option('--account <id>', ACCOUNT_HELP),
  ).action(async (o: JsonFlag & { account: string }) => {
    const tokens = await adminFromEnv().tokens(o.account).catch(explain);
    printResult(o, tokens, () =>
      tokens.length
        ? tokens.map(
            (t) =>
              `${t.id}  ${t.prefix ? `${t.prefix}…` : '(no prefix)'}  ${t.scopes.join(',')}  ` +
              `last used ${t.last_used_at ?? 'never'}${t.revoked_at ? `  revoked ${t.revoked_at}` : ''}`,
          )
        : 'no tokens',
    );
  });
  withJson(token.command('revoke').description('Revoke an API token').argument('<token-id>')).action(
    async (id: string, flags: JsonFlag) => {
      await adminFromEnv().revokeToken(id).catch(explain);
      printResult(flags, { id, revoked: true }, () => `revoked ${id}`);
    },
  );

  withJson(
    sandbox
      .command('sender')
      .description('Approved senders')
      .command('add')
      .description('Approve a sender for an account')
      .option('--account <id>', ACCOUNT_HELP)
      .requiredOption('--sender <sender>', 'sender id, e.g. ACME'),
  ).action(async (o: JsonFlag & { account: string; sender: string }) => {
    await adminFromEnv().addSender(o.account, o.sender).catch(explain);
    printResult(o, { account: o.account, sender: o.sender, approved: true }, () => `approved sender ${o.sender}`);
  });

  withJson(
    sandbox
      .command('credit')
      .description("Add to an account's wallet")
      .option('--account <id>', ACCOUNT_HELP)
      .requiredOption('--amount <minor units>', 'amount to add', integer),
  ).action(async (o: JsonFlag & { account: string; amount: number }) => {
    await adminFromEnv().credit(o.account, o.amount).catch(explain);
    printResult(o, { account: o.account, credited: o.amount }, () => `credited ${o.amount}`);
  });

  withJson(
    sandbox
      .command('inbox')
      .description('What was sent to a number, newest first (texts in clear)')
      .requiredOption('--to <number>', 'recipient, international digits only'),
  ).action(async (o: JsonFlag & { to: string }) => {
    const entries = await adminFromEnv().inbox(o.to).catch(explain);
    printResult(o, entries, () =>
      entries.length
        ? entries.map((e) => `${e.created_at}  ${e.kind}  from ${e.sender}  ${e.provider_message_id}\n  ${e.text}`)
        : `nothing sent to ${o.to}`,
    );
  });

  withJson(
    sandbox
      .command('deliveries')
      .description(
        "An account's webhook deliveries with every attempt (status, latency, start of the answer), newest first",
      )
      .option('--account <id>', ACCOUNT_HELP)
      .option('--message <id>', "only deliveries carrying this message's events")
      .addOption(new Option('--state <state>', 'only deliveries in this state').choices(DeliveryState.options))
      .option('--limit <n>', 'at most this many (default 50)', positive),
  ).action(
    async (o: JsonFlag & { account: string; message?: string; state?: DeliveryRecord['state']; limit?: number }) => {
      const deliveries = await adminFromEnv()
        .deliveries(o.account, definedOnly({ messageId: o.message, state: o.state, limit: o.limit }))
        .catch(explain);
      printResult(o, deliveries, () => (deliveries.length ? deliveries.map(deliveryLine) : 'no deliveries'));
    },
  );

  const delivery = sandbox.command('delivery').description('One webhook delivery');
  withJson(delivery.command('show').description('A delivery with its attempts').argument('<delivery-id>')).action(
    async (id: string, flags: JsonFlag) => {
      const shown = await adminFromEnv().delivery(id).catch(explain);
      printResult(flags, shown, () => [
        deliveryLine(shown),
        ...shown.attempts.map(
          (a) =>
            `  attempt ${a.attempt}  ${a.at}  ${a.status ?? a.error ?? 'no answer'}  ${a.latency_ms} ms` +
            (a.response_start ? `  ${JSON.stringify(a.response_start)}` : ''),
        ),
      ]);
    },
  );
  withJson(
    delivery
      .command('redeliver')
      .description('Send a delivery again now, whatever its state')
      .argument('<delivery-id>'),
  ).action(async (id: string, flags: JsonFlag) => {
    const queued = await adminFromEnv().redeliver(id).catch(explain);
    printResult(flags, queued, () => `delivery ${queued.id} queued again (${queued.state})`);
  });

  const webhooks = sandbox.command('webhooks').description("Pause or resume an account's webhook deliveries");
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    withJson(
      webhooks
        .command(name)
        .description(paused ? 'Hold deliveries back, as during a receiver outage' : 'Send held deliveries again')
        .option('--account <id>', ACCOUNT_HELP),
    ).action(async (o: JsonFlag & { account: string }) => {
      await adminFromEnv().setWebhooksPaused(o.account, paused).catch(explain);
      printResult(o, { account: o.account, paused }, () => `webhook deliveries ${paused ? 'paused' : 'resumed'}`);
    });
  }

  const outcome = sandbox.command('outcome').description("Force the outcome of a number's next messages");
  withJson(
    outcome
      .command('set')
      .description('Messages sent to this number from now on end in this state')
      .requiredOption('--to <number>', 'recipient, international digits only')
      .addOption(
        new Option('--outcome <state>', 'final state, or none (stays sent)')
          .choices(ForcedOutcomeRequest.shape.outcome.options)
          .makeOptionMandatory(),
      )
      .option('--delay <duration>', 'sent -> final delay, e.g. 0s or 2m (default: the carrier timing)', duration),
  ).action(async (o: JsonFlag & { to: string; outcome: ForcedOutcome['outcome']; delay?: number }) => {
    const forced = await adminFromEnv()
      .setOutcome(o.to, o.outcome, o.delay ?? null)
      .catch(explain);
    printResult(o, forced, () => outcomeLine(forced));
  });
  withJson(
    outcome
      .command('clear')
      .description("Back to the magic numbers' outcomes")
      .requiredOption('--to <number>', 'recipient, international digits only'),
  ).action(async (o: JsonFlag & { to: string }) => {
    await adminFromEnv().clearOutcome(o.to).catch(explain);
    printResult(o, { to: o.to, cleared: true }, () => `cleared the outcome of ${o.to}`);
  });
  withJson(outcome.command('list').description('Every forced outcome')).action(async (flags: JsonFlag) => {
    const outcomes = await adminFromEnv().outcomes().catch(explain);
    printResult(flags, outcomes, () => (outcomes.length ? outcomes.map(outcomeLine) : 'no forced outcomes'));
  });

  withJson(
    sandbox
      .command('reset')
      .description("Forget an account's messages, calls, campaigns, OTPs and deliveries (keeps keys, settings, wallet)")
      .option('--account <id>', ACCOUNT_HELP),
  ).action(async (o: JsonFlag & { account: string }) => {
    await adminFromEnv().resetAccount(o.account).catch(explain);
    printResult(o, { account: o.account, reset: true }, () => `reset ${o.account}`);
  });

  withJson(
    sandbox.command('console-link').description('Print a one-time sign-in link to the web console (valid ten minutes)'),
  ).action(async (flags: JsonFlag) => {
    const url = await adminFromEnv().consoleSignInLink().catch(explain);
    printResult(flags, { url }, () => url);
  });

  withJson(
    sandbox.command('ledger').description("An account's credits and charges").option('--account <id>', ACCOUNT_HELP),
  ).action(async (o: JsonFlag & { account: string }) => {
    const entries = await adminFromEnv().ledger(o.account).catch(explain);
    printResult(o, entries, () =>
      entries.length
        ? entries.map(
            (e) =>
              `${e.created_at}  ${e.kind === 'credit' ? '+' : '-'}${e.amount} ${e.currency}  balance ${e.balance_after}  ${e.kind}${e.reference ? `  ${e.reference}` : ''}`,
          )
        : 'no entries',
    );
  });
}

function adminFromEnv(): SandboxAdmin {
  const env = SandboxEnv.pick({ MSGFLOW_SANDBOX_URL: true, MSGFLOW_SANDBOX_ADMIN_TOKEN: true }).safeParse(process.env);
  if (!env.success) {
    throw new ConfigError(
      detailsOf(env.error)
        .map((d) => `${d.path}: ${d.message}`)
        .join('\n'),
    );
  }
  if (!env.data.MSGFLOW_SANDBOX_ADMIN_TOKEN) {
    throw new ConfigError('Set MSGFLOW_SANDBOX_ADMIN_TOKEN to the admin token the sandbox printed or was started with');
  }
  return new SandboxAdmin({ url: env.data.MSGFLOW_SANDBOX_URL, adminToken: env.data.MSGFLOW_SANDBOX_ADMIN_TOKEN });
}

/** Turns an admin API error into one readable message (field details included). */
function explain(error: unknown): never {
  if (error instanceof SandboxAdminError) {
    const details = (error.details ?? []).map((d) => `\n  ${d.path || '(body)'}: ${d.message}`).join('');
    throw new Error(`sandbox answered ${error.status} ${error.code}: ${error.message}${details}`);
  }
  if (error instanceof TypeError)
    throw new Error(`cannot reach the sandbox (${(error.cause as Error | undefined)?.message ?? error.message})`);
  throw error;
}

const positive = positiveInt('--limit');

function deliveryLine(d: DeliveryRecord): string {
  const last = d.attempts.at(-1);
  const tried = last
    ? `${d.attempts.length} attempt(s), last ${last.status ?? last.error ?? 'no answer'}`
    : 'not tried';
  return `${d.id}  ${d.state}  ${d.event_types.join(',')}  ${d.url ?? '(endpoint deleted)'}  ${tried}`;
}

function outcomeLine(f: ForcedOutcome): string {
  const delay = f.final_delay_ms === null ? '' : ` after ${formatDuration(f.final_delay_ms)}`;
  return `${f.mobile_number}: ${f.outcome === 'none' ? 'stays sent' : `ends ${f.outcome}${delay}`}`;
}

function integer(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('must be a whole number (minor units)');
  return Number(value);
}

function scopeList(value: string): Scope[] {
  const scopes = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(
      `unknown scope ${unknown.join(', ') || '(none given)'}; choose from ${SCOPES.join(', ')}`,
    );
  }
  return scopes as Scope[];
}

function camelCase(flag: string): string {
  return flag
    .split(' ')[0]!
    .replace(/^--/, '')
    .replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}

/** Drops undefined properties, so options left unset fall back to the sandbox's defaults. */
function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
