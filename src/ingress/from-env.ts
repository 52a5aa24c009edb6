/** The ingress wired from the environment (`msgflow ingress`). */
import type { Client } from '@temporalio/client';
import { ConfigError, IngressEnv, parseEnv } from '../config.js';
import type { Logger } from '../log.js';
import { createIngressMetrics, withIngressMetrics } from './metrics.js';
import { lazyClient } from '../temporal/connection.js';
import { dataConverterFromEnv } from '../temporal/data-converter.js';
import { type RunningIngress, startIngress } from './server.js';
import { type MessageStore, openMessageStore, storeOptionsFromEnv } from '../store/index.js';
import { outcomeRouter } from './outcome-router.js';
import { startRelay } from './relay.js';
import { standardWebhooksVerifier } from './verifier.js';
import { startTracingFromEnv } from '../tracing/setup.js';

export async function startIngressFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Promise<RunningIngress> {
  const ingress = parseEnv(IngressEnv, env);
  if (!ingress.MSGFLOW_WEBHOOK_SECRETS?.length) {
    throw new ConfigError('MSGFLOW_WEBHOOK_SECRETS is required: the whsec_… secret(s) the provider signs with');
  }
  startTracingFromEnv('msgflow-ingress', env);
  // The signals' payloads are encrypted like every other client's when MSGFLOW_ENCRYPTION_KEY is set. Connected
  // by the relay's first signal: the ingress starts and answers while Temporal is down, and tells once it is back.
  const client = await lazyClient(env, { dataConverter: dataConverterFromEnv(env) });
  const store = await openMessageStore(storeOptionsFromEnv(env));
  const metrics = createIngressMetrics({ store });
  const relay = startRelay({
    store,
    client,
    signalsPerSecond: ingress.MSGFLOW_RELAY_SIGNALS_PER_SECOND,
    leaseMs: ingress.MSGFLOW_RELAY_LEASE_SECONDS * 1000,
    onSignal: metrics.onSignal,
    logger,
    // Test only: dies as `kill -9` would, between Temporal accepting a signal and its outcomes being marked told.
    ...(env.MSGFLOW_TEST_KILL_AFTER_SIGNAL === '1'
      ? { afterSignalAccepted: () => process.kill(process.pid, 'SIGKILL') }
      : {}),
  });
  const stop = () => relay.close().finally(() => Promise.all([store.close(), client.connection.close()]));
  try {
    const running = await startIngress(
      withIngressMetrics(
        {
          host: ingress.MSGFLOW_INGRESS_HOST,
          port: ingress.MSGFLOW_INGRESS_PORT,
          verifier: standardWebhooksVerifier(ingress.MSGFLOW_WEBHOOK_SECRETS),
          router: outcomeRouter({ store, relay }),
          isReady: () => isReady(store),
          logger,
        },
        metrics,
      ),
    );
    return { ...running, close: () => running.close().finally(stop) };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Readiness: the ingress answers deliveries while it can record them; Temporal's state does not matter (the
 * relay tells the workflows when Temporal is back).
 */
export async function isReady(store: Pick<MessageStore, 'message'>): Promise<boolean> {
  return isStoreReachable(store);
}

async function isStoreReachable(store: Pick<MessageStore, 'message'>): Promise<boolean> {
  try {
    await store.message('readiness-probe');
    return true;
  } catch {
    return false;
  }
}

export async function isTemporalReachable(client: Client): Promise<boolean> {
  try {
    await client.withDeadline(Date.now() + 2000, () => client.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
