/**
 * The whole msgflow stack on one machine, wired in one place: the provider sandbox, an account with a
 * token and an approved sender, the webhook ingress registered as the account's webhook, and the worker.
 * `msgflow dev` runs it on fixed ports with state in .data/; end-to-end tests run it on ephemeral ports.
 * Temporal itself is started by the caller (dev server or the test run's shared server).
 */
import type { OtpGuardConfig } from './api/otp-guard.js';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { WorkflowBundle } from '@temporalio/worker';
import type { NexusTeams } from './api/nexus-teams.js';
import type { Scope } from './api/scopes.js';
import { SCOPES } from './api/scopes.js';
import { MessagingClient } from './client/client.js';
import { AuthenticationError } from './client/errors.js';
import { isReady } from './ingress/from-env.js';
import { WEBHOOK_PATH } from './ingress/app.js';
import { type RunningIngress, startIngress } from './ingress/server.js';
import { outcomeRouter } from './ingress/outcome-router.js';
import { type Relay, startRelay } from './ingress/relay.js';
import { standardWebhooksVerifier } from './ingress/verifier.js';
import { type Logger, silentLogger } from './log.js';
import { createIngressMetrics, withIngressMetrics } from './ingress/metrics.js';
import { type RunningSandbox, SandboxAdmin, type SandboxOptions, startSandbox } from './sandbox/index.js';
import { Msgflow } from './starter/index.js';
import { generateOtpKeys, type OtpKeys } from './crypto/otp-keys.js';
import { keyRingOf, msgflowDataConverter } from './temporal/data-converter.js';
import { type MessageStore, type MessageStoreOptions, openMessageStore } from './store/index.js';
import { loadWorkerSdk } from './temporal/worker-sdk.js';
import type { WorkerVersioning } from './temporal/worker-deployment.js';
import { createMsgflowWorker, type MsgflowWorker } from './worker.js';
import type { AudienceAccess } from './audience/access.js';
import type { AudienceLoaders } from './audience/loaders.js';
import { tracingClientInterceptors } from './tracing/setup.js';

export const DEV_SENDERS = ['ACME', 'MSGFLOW'];

export interface StackOptions {
  temporal: { address: string; namespace: string };
  taskQueue: string;
  sandbox?: SandboxOptions;
  /**
   * `relay: false` runs the ingress without its relay (tests that run relays in other processes): nothing in
   * this process then tells the workflows their outcomes.
   */
  ingress?: { host?: string; port?: number; relay?: boolean };
  /** A token from an earlier run; reused when the sandbox still accepts it. */
  reuseToken?: string;
  /** The account's wallet when a new one is made, in minor units. */
  initialBalance?: number;
  /** The token's request limit, applied on the sandbox account and on the provider task queue. */
  ratePerMinute?: number;
  workflowBundle?: WorkflowBundle;
  /** Audience loaders for the stack's worker (campaigns with a `loader` audience). */
  audienceLoaders?: AudienceLoaders;
  /** The stack's worker's team weights in the token's campaign requests (default: every team 1). */
  teamWeight?: (team: string) => number;
  /** The folders and hosts the stack's worker reads file and URL audiences from (default: `.data/audiences`, no URLs). */
  audienceAccess?: AudienceAccess;
  /** The OTP fraud guard's rules for the stack's worker (default DEFAULT_OTP_GUARD; null: no guard, no OTP record). */
  otpGuard?: OtpGuardConfig | null;
  /** The worker's workflow cache size (default: the SDK's, sized from the heap). */
  maxCachedWorkflows?: number;
  /**
   * The deployment version the stack's worker polls as, and whether it makes itself current: startStack
   * returns once it is routed. Without it the worker polls unversioned.
   */
  versioning?: WorkerVersioning;
  /**
   * The stack's worker also serves the `msgflow` Nexus service (docs/nexus.md): `true` for the default team on
   * its queue, or `{ teams }` (team → task queue, `nexusTeamsOf`).
   */
  nexus?: boolean | { teams: NexusTeams };
  /** Run the worker in this process (default). Off when the caller runs workers elsewhere. */
  startWorker?: boolean;
  logger?: Logger;
  /** MSGFLOW_ENCRYPTION_KEY's format: with it, every payload the stack's clients and worker write is encrypted. */
  encryptionKey?: string;
  /** OTP's id hash key and seal key ring (see OtpEnv); fresh random ones when omitted. */
  otpKeys?: OtpKeys;
  /**
   * Where the message store lives (default: SQLite in memory, shared by this process's ingress and worker).
   * With `encryptionKey` and no encryption of its own, numbers are encrypted at rest under that key.
   */
  store?: MessageStoreOptions;
}

export interface RunningStack {
  taskQueue: string;
  sandbox: RunningSandbox;
  admin: SandboxAdmin;
  accountId: string | undefined;
  token: string;
  webhookSecret: string;
  ingress: RunningIngress;
  store: MessageStore;
  worker?: MsgflowWorker;
  /** Resolves when the worker stops (after close(), or on its own failure); never, without a worker. */
  workerRun: Promise<void>;
  messaging: MessagingClient;
  temporal: Client;
  msgflow: Msgflow;
  otpKeys: OtpKeys;
  close(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  const logger = options.logger ?? silentLogger;
  const ratePerMinute = options.ratePerMinute ?? 120;
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((error) => logger.warn('cleanup failed', { error }));
  };

  try {
    const sandbox = await startSandbox(options.sandbox);
    cleanups.push(() => sandbox.close());
    const admin = new SandboxAdmin({ url: sandbox.url, adminToken: sandbox.adminToken });

    const { accountId, token } = await accountFor(
      sandbox,
      admin,
      options.reuseToken,
      options.initialBalance ?? 10_000_000,
      ratePerMinute,
    );
    const messaging = new MessagingClient({ baseUrl: sandbox.baseUrl, token });

    const otpKeys = options.otpKeys ?? generateOtpKeys().keys;
    const dataConverter = msgflowDataConverter(options.encryptionKey ? keyRingOf(options.encryptionKey) : undefined);
    const connection = await Connection.connect({ address: options.temporal.address });
    cleanups.push(() => connection.close());
    const temporal = new Client({
      connection,
      namespace: options.temporal.namespace,
      dataConverter,
      interceptors: tracingClientInterceptors(),
    });
    const store = await openMessageStore(storeOptionsOf(options));
    cleanups.push(() => store.close());

    const { ingress, relay, webhookSecret } = await startStackIngress(options.ingress, {
      messaging,
      store,
      temporal,
      logger,
    });
    if (relay) cleanups.push(() => relay.close());
    cleanups.push(() => ingress.close());

    const { worker, workerRun } =
      options.startWorker === false
        ? { worker: undefined, workerRun: new Promise<void>(() => {}) }
        : await startWorker({
            options: { ...options, otpKeys },
            store,
            messaging: new MessagingClient({ baseUrl: sandbox.baseUrl, token, maxRetries: 0 }),
            ratePerMinute,
            cleanups,
            dataConverter,
          });

    return {
      taskQueue: options.taskQueue,
      sandbox,
      admin,
      accountId,
      token,
      webhookSecret,
      ingress,
      store,
      worker,
      workerRun,
      messaging,
      temporal,
      msgflow: new Msgflow(temporal, options.taskQueue, { otpKeys, store }),
      otpKeys,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The ingress, behind a webhook registered with the sandbox for its address (fixed before it listens). */
/** The ingress, and the relay that tells workflows what it records (unless `where.relay` is false). */
async function startStackIngress(
  where: StackOptions['ingress'],
  {
    messaging,
    store,
    temporal,
    logger,
  }: { messaging: MessagingClient; store: MessageStore; temporal: Client; logger: Logger },
): Promise<{ ingress: RunningIngress; relay?: Relay; webhookSecret: string }> {
  // The ingress's address is fixed before it listens, so the webhook (and its secret) can come first.
  const host = where?.host ?? '127.0.0.1';
  const port = where?.port || (await freePort(host));
  const webhookSecret = await registerWebhook(messaging, `http://${host}:${port}${WEBHOOK_PATH}`);
  const metrics = createIngressMetrics({ store });
  const relay =
    where?.relay === false ? undefined : startRelay({ store, client: temporal, onSignal: metrics.onSignal, logger });
  const ingress = await startIngress(
    withIngressMetrics(
      {
        host,
        port,
        verifier: standardWebhooksVerifier([webhookSecret]),
        router: outcomeRouter({ store, relay: relay ?? { wake: () => {} } }),
        isReady: () => isReady(store),
        logger,
      },
      metrics,
    ),
  ).catch(async (error: unknown) => {
    await relay?.close();
    throw error;
  });
  return { ingress, relay, webhookSecret };
}

async function startWorker({
  options,
  store,
  messaging,
  ratePerMinute,
  cleanups,
  dataConverter,
}: {
  options: StackOptions;
  store: MessageStore;
  messaging: MessagingClient;
  ratePerMinute: number;
  cleanups: Array<() => Promise<unknown>>;
  dataConverter: DataConverter;
}): Promise<{ worker: MsgflowWorker; workerRun: Promise<void> }> {
  const { NativeConnection } = await loadWorkerSdk("the stack's worker");
  const connection = await NativeConnection.connect({ address: options.temporal.address });
  const worker = await createMsgflowWorker({
    connection,
    namespace: options.temporal.namespace,
    taskQueue: options.taskQueue,
    messaging,
    store,
    providerRatePerMinute: ratePerMinute,
    teamWeight: options.teamWeight,
    workflowBundle: options.workflowBundle,
    audienceLoaders: options.audienceLoaders,
    audienceAccess: options.audienceAccess,
    maxCachedWorkflows: options.maxCachedWorkflows,
    dataConverter,
    otpKeyRing: options.otpKeys?.sealing,
    otpGuard: options.otpGuard,
    logger: options.logger,
    versioning: options.versioning,
    ...(options.nexus && options.otpKeys
      ? { nexus: { otpKeys: options.otpKeys, ...(options.nexus === true ? {} : { teams: options.nexus.teams }) } }
      : {}),
  });
  const workerRun = worker.run();
  cleanups.push(async () => {
    worker.shutdown();
    await workerRun.catch(() => undefined);
    await connection.close();
  });
  // New workflows reach a versioned worker only once its build is current.
  await worker.routed;
  return { worker, workerRun };
}

async function accountFor(
  sandbox: RunningSandbox,
  admin: SandboxAdmin,
  reuseToken: string | undefined,
  balance: number,
  ratePerMinute: number,
): Promise<{ accountId: string | undefined; token: string }> {
  if (reuseToken) {
    try {
      await new MessagingClient({ baseUrl: sandbox.baseUrl, token: reuseToken, maxRetries: 0 }).balance.get();
      return { accountId: await accountOfToken(admin, reuseToken), token: reuseToken };
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw error;
    }
  }
  const account = await admin.createAccount({ name: 'msgflow dev', balance });
  for (const sender of DEV_SENDERS) await admin.addSender(account.id, sender);
  await admin.setRateLimit(account.id, ratePerMinute);
  const created = await admin.createToken(account.id, { scopes: [...SCOPES] as Scope[], name: 'msgflow' });
  return { accountId: account.id, token: created.token };
}

/** The account holding `token`, found by the token's stored prefix (undefined for an old token without one). */
async function accountOfToken(admin: SandboxAdmin, token: string): Promise<string | undefined> {
  for (const account of await admin.listAccounts()) {
    const tokens = await admin.tokens(account.id);
    if (tokens.some((t) => t.prefix !== null && t.revoked_at === null && token.startsWith(t.prefix))) return account.id;
  }
  return undefined;
}

/** Registers `url` for all events, replacing earlier registrations of the same URL (their secrets are gone). */
async function registerWebhook(messaging: MessagingClient, url: string): Promise<string> {
  for await (const endpoint of messaging.webhooks.list()) {
    if (endpoint.url === url) await messaging.webhooks.delete(endpoint.id);
  }
  const registration = await messaging.webhooks.create({ url });
  return registration.secret;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function storeOptionsOf({ store = { file: ':memory:' }, encryptionKey }: StackOptions): MessageStoreOptions {
  if (!encryptionKey || store.encryption) return store;
  return { ...store, encryption: { ring: keyRingOf(encryptionKey), lookupKey: randomBytes(32) } };
}
