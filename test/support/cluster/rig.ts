/**
 * The production topology with a provider to send through, as the cluster reliability runs set it up: the
 * cluster (PostgreSQL, two Temporal nodes behind a failover address), the sandbox as the provider with one
 * account, msgflow's workers and ingresses for that account, the message store, and a Temporal client.
 * With `proxies`, msgflow's processes reach Temporal, the provider and the store each through a TCP proxy
 * of their own, which a fault run cuts and holds (each ingress reaches Temporal through one of its own too);
 * the test's own client and store reach them directly.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { MessagingClient } from '../../../src/client/index.js';
import { DEFAULT_DEPLOYMENT_NAME } from '../../../src/definitions/versioning.js';
import type { SandboxOptions } from '../../../src/sandbox/index.js';
import { type MessageStore, openMessageStore } from '../../../src/store/index.js';
import { msgflowDataConverter } from '../../../src/temporal/data-converter.js';
import { startTestSandbox, type TestAccount, type TestSandbox } from '../sandbox.js';
import { startTcpProxy, type TcpProxy } from '../tcp-proxy.js';
import {
  type ClusterInfrastructure,
  type MsgflowReplicas,
  type ReplicaOptions,
  startClusterInfrastructure,
  startMsgflowReplicas,
} from './topology.js';

export interface ClusterRigOptions {
  sandbox: SandboxOptions;
  account: { balance: number; ratePerMinute: number };
  replicas: Pick<ReplicaOptions, 'ratePerMinute' | 'env' | 'workers' | 'ingresses'>;
  /** Put msgflow's connections to Temporal, the provider and the store behind proxies a test can cut. */
  proxies?: boolean;
  /** Temporal server settings added to msgflow's own. */
  dynamicConfig?: Record<string, unknown>;
  log?: (line: string) => void;
}

/** The proxies between msgflow's processes and what they depend on. */
export interface DependencyProxies {
  toTemporal: TcpProxy;
  toProvider: TcpProxy;
  toStore: TcpProxy;
  /** Each ingress's own way to Temporal (behind `toTemporal`), in ingress order: one ingress cut off alone. */
  ingressToTemporal: TcpProxy[];
}

export interface ClusterRig {
  infra: ClusterInfrastructure;
  provider: TestSandbox;
  account: TestAccount;
  /** The provider's API with the account's token. */
  messaging: MessagingClient;
  replicas: MsgflowReplicas;
  proxies: DependencyProxies | undefined;
  /** The message store and a Temporal client, both direct (never through the proxies). */
  store: MessageStore;
  client: Client;
  taskQueue: string;
  /** The Worker Deployment the workers join (versioned, as msgflow's workers are by default). */
  deploymentName: string;
  close(): Promise<void>;
}

export async function startClusterRig(options: ClusterRigOptions): Promise<ClusterRig> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  };
  try {
    // On a fresh machine this builds the Temporal server first (minutes; .ci/run does it beforehand).
    const infra = await startClusterInfrastructure({ log: options.log, dynamicConfig: options.dynamicConfig });
    cleanups.push(() => infra.stop());
    const provider = await startTestSandbox(options.sandbox);
    cleanups.push(() => provider.close());
    const account = await provider.newAccount(options.account);
    const messaging = new MessagingClient({ baseUrl: provider.sandbox.baseUrl, token: account.token });

    let proxies: DependencyProxies | undefined;
    const env: Record<string, string> = { ...options.replicas.env };
    let apiBaseUrl = provider.sandbox.baseUrl;
    if (options.proxies) {
      const sandboxUrl = new URL(provider.sandbox.baseUrl);
      const toTemporal = await startTcpProxy(infra.address);
      const ingresses = options.replicas.ingresses ?? 2;
      proxies = {
        toTemporal,
        toProvider: await startTcpProxy(sandboxUrl.host),
        toStore: await startTcpProxy(`127.0.0.1:${infra.postgres.port}`),
        ingressToTemporal: await Promise.all(
          Array.from({ length: ingresses }, () => startTcpProxy(toTemporal.address)),
        ),
      };
      const opened = proxies;
      cleanups.push(() =>
        Promise.all(
          [opened.toTemporal, opened.toProvider, opened.toStore, ...opened.ingressToTemporal].map((p) => p.close()),
        ),
      );
      env.TEMPORAL_ADDRESS = proxies.toTemporal.address;
      apiBaseUrl = `http://${proxies.toProvider.address}${sandboxUrl.pathname}`;
    }
    const taskQueue = `cluster-${randomUUID()}`;
    const replicas = await startMsgflowReplicas(infra, {
      taskQueue,
      apiBaseUrl,
      apiToken: account.token,
      registerWebhook: async (url) => (await messaging.webhooks.create({ url })).secret,
      storeDatabase: 'msgflow',
      ...options.replicas,
      env,
      ...(proxies ? { storeUrlVia: viaProxy(proxies.toStore), envOf: ingressesVia(proxies.ingressToTemporal) } : {}),
    });
    cleanups.push(() => replicas.close());
    const store = await openMessageStore({ url: replicas.storeUrl });
    cleanups.push(() => store.close());
    const connection = await Connection.connect({ address: infra.address });
    cleanups.push(() => connection.close());
    const client = new Client({ connection, namespace: infra.namespace, dataConverter: msgflowDataConverter() });
    const deploymentName = env.MSGFLOW_DEPLOYMENT_NAME ?? DEFAULT_DEPLOYMENT_NAME;
    return { infra, provider, account, messaging, replicas, proxies, store, client, taskQueue, deploymentName, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The same database URL with the proxy's address for host and port. */
function viaProxy(proxy: TcpProxy): (url: string) => string {
  return (url) => {
    const proxied = new URL(url);
    proxied.host = proxy.address;
    return proxied.toString();
  };
}

/** Each ingress's Temporal address: its own proxy's. */
function ingressesVia(proxies: TcpProxy[]): (name: string) => Record<string, string> {
  return (name): Record<string, string> => {
    const proxy = proxies[Number(/^ingress-(\d+)$/.exec(name)?.[1] ?? 0) - 1];
    return proxy ? { TEMPORAL_ADDRESS: proxy.address } : {};
  };
}
