/** The ingress wired from the environment (`msgflow ingress`). */
import type { Client } from '@temporalio/client';
import { ConfigError, IngressEnv, parseEnv, WorkerEnv } from '../config.js';
import type { Logger } from '../log.js';
import { createIngressMetrics, withIngressMetrics } from './metrics.js';
import { connectClient } from '../temporal/connection.js';
import { dataConverterFromEnv } from '../temporal/data-converter.js';
import { type RunningIngress, startIngress } from './server.js';
import { temporalSignaler } from './signaler.js';
import { standardWebhooksVerifier } from './verifier.js';

export async function startIngressFromEnv(env: NodeJS.ProcessEnv, logger: Logger): Promise<RunningIngress> {
  const ingress = parseEnv(IngressEnv, env);
  const { MSGFLOW_TASK_QUEUE } = parseEnv(WorkerEnv, env);
  if (!ingress.MSGFLOW_WEBHOOK_SECRETS?.length) {
    throw new ConfigError('MSGFLOW_WEBHOOK_SECRETS is required: the whsec_… secret(s) the provider signs with');
  }
  // The signals' payloads are encrypted like every other client's when MSGFLOW_ENCRYPTION_KEY is set.
  const client = await connectClient(env, { dataConverter: dataConverterFromEnv(env) });
  return startIngress(
    withIngressMetrics(
      {
        host: ingress.MSGFLOW_INGRESS_HOST,
        port: ingress.MSGFLOW_INGRESS_PORT,
        verifier: standardWebhooksVerifier(ingress.MSGFLOW_WEBHOOK_SECRETS),
        signaler: temporalSignaler({ client, taskQueue: MSGFLOW_TASK_QUEUE }),
        isReady: () => isTemporalReachable(client),
        logger,
      },
      createIngressMetrics(),
    ),
  );
}

/** Readiness: the ingress is only useful while it can hand events to Temporal. */
export async function isTemporalReachable(client: Client): Promise<boolean> {
  try {
    await client.withDeadline(Date.now() + 2000, () => client.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}
