// Compiled under strict TypeScript against the installed package's declarations (never run).
import { InvalidWorkflowInputError, type Msgflow, type SendSmsInput, type SendSmsResult, TASK_QUEUES } from 'msgflow';
import { MessagingClient, RateLimitError } from 'msgflow/client';
import {
  createMsgflowWorker,
  createProviderQueueActivities,
  type MessageStore,
  openMessageStore,
  storeOptionsFromEnv,
  WORKFLOWS_PATH,
} from 'msgflow/worker';
import {
  createIngressApp,
  outcomeRouter,
  standardWebhooksVerifier,
  startRelay,
  StoreUnavailableError,
} from 'msgflow/ingress';
import { type RunningSandbox, SandboxAdmin, startSandbox } from 'msgflow/sandbox';
import { type RunningStack, startStack } from 'msgflow/testing';

export const sms: SendSmsInput = { sender: 'ACME', recipients: ['12025550100'], message: 'Hello' };
// @ts-expect-error: inputs are typed (not `any`): a message is text
export const wrong: SendSmsInput = { sender: 'ACME', recipients: ['12025550100'], message: 42 };

export async function sendAndWait(msgflow: Msgflow): Promise<string | undefined> {
  try {
    const started = await msgflow.sendSms(sms, { key: 'order-42' });
    const result: SendSmsResult = await started.result();
    return result.messages[0]?.status;
  } catch (error) {
    if (error instanceof InvalidWorkflowInputError) return error.details[0]?.message;
    throw error;
  }
}

export async function balance(token: string): Promise<number> {
  const client = new MessagingClient({ baseUrl: 'https://api.example.com/v1', token });
  try {
    return (await client.balance.get()).balance;
  } catch (error) {
    if (error instanceof RateLimitError) return -1;
    throw error;
  }
}

export const queue: string = TASK_QUEUES.workflows;
export const workflowsPath: string = WORKFLOWS_PATH;
export const parts = [createMsgflowWorker, createProviderQueueActivities, createIngressApp, startStack] as const;

export async function ingress(msgflow: Msgflow) {
  const store = await openMessageStore(storeOptionsFromEnv());
  return createIngressApp({
    verifier: standardWebhooksVerifier(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']),
    router: outcomeRouter({ store, relay: startRelay({ store, client: msgflow.client }) }),
  });
}

export const unavailable: Error[] = [new StoreUnavailableError('down')];

export async function storeDialect(store: MessageStore): Promise<'sqlite' | 'postgres'> {
  return store.dialect;
}

export async function sandbox(): Promise<RunningSandbox> {
  const running = await startSandbox({ port: 0, db: ':memory:' });
  await new SandboxAdmin({ url: running.url, adminToken: running.adminToken }).createAccount({ name: 'test' });
  return running;
}

export async function stackToken(stack: RunningStack): Promise<string> {
  return stack.token;
}
