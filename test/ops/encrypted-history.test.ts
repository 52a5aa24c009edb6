/**
 * Personal data at rest in Temporal: with an encryption key, a real send leaves no phone number and no text
 * in the histories the server stores, failure messages included, while the codec endpoint shows them to a
 * caller holding its token and refuses everyone else. A control run without a key proves the probe sees
 * plaintext when there is some.
 */
import { randomUUID } from 'node:crypto';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCodecToken } from '../../src/cli/codec.js';
import { toJsonPayload } from '../../src/codec-server/payload-json.js';
import { type RunningCodecServer, startCodecServer } from '../../src/codec-server/server.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { ENCRYPTED_ENCODING, EncryptionCodec } from '../../src/temporal/codec.js';
import { keyRingOf } from '../../src/temporal/data-converter.js';
import { messageWorkflowId } from '../../src/definitions/workflow-ids.js';
import { startTestStack } from '../support/stack.js';
import { rawHistory } from './support.js';

const NUMBERS = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered];
const TEXT = `Parcel ${randomUUID().slice(0, 8)} awaits pickup at the Lekki depot`;
const personalData = (bytes: Buffer) => [...NUMBERS, TEXT, 'awaits pickup'].filter((needle) => bytes.includes(needle));

describe('encrypted histories', () => {
  const encryptionKey = `k1:${generateKey()}`;
  const token = generateCodecToken();
  let stack: RunningStack;
  let codec: RunningCodecServer;

  beforeAll(async () => {
    stack = await startTestStack({ encryptionKey });
    codec = await startCodecServer({
      codec: new EncryptionCodec(keyRingOf(encryptionKey)),
      tokens: [token],
      allowedOrigins: ['http://localhost:8233'],
    });
  });
  afterAll(async () => {
    await codec?.close();
    await stack?.close();
  });

  it('keeps numbers and texts out of every history a send writes, while the keyed client reads the result', async () => {
    const started = await stack.msgflow.sendSms({ recipients: NUMBERS, sender: 'ACME', message: TEXT });
    const result = await started.result();
    expect(result.messages.map((m) => m.mobile_number).sort()).toEqual(NUMBERS.map((n) => `+${n}`).sort());

    const workflowIds = [started.workflowId, ...result.messages.map((m) => messageWorkflowId(m.provider_message_id))];
    for (const workflowId of workflowIds) {
      const { events, bytes } = await rawHistory(stack.temporal, workflowId);
      expect(events.length).toBeGreaterThan(2);
      expect(personalData(bytes), workflowId).toEqual([]);
      // What is readable is what operators search by: ids and search attributes, none of them personal.
      expect(bytes.includes('MsgflowKind')).toBe(true);
    }

    const { events } = await rawHistory(stack.temporal, started.workflowId);
    const input = events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);

    // A client without the key sees only ciphertext.
    const keyless = new Client({ connection: stack.temporal.connection, namespace: stack.temporal.options.namespace });
    await expect(keyless.workflow.getHandle(started.workflowId).result()).rejects.toThrow(/binary\/encrypted/);
  });

  it('encrypts failure messages too (encodeCommonAttributes)', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'NOTAPPROVED',
      message: TEXT,
    });
    const failure = await started.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    // The keyed client restores the message (workflow failure <- activity failure <- the provider's refusal)...
    const providerRefusal = (failure as WorkflowFailedError).cause?.cause as Error | undefined;
    expect(providerRefusal?.message).toMatch(/not approved/);
    // ...which the server only holds encrypted.
    const { events, bytes } = await rawHistory(stack.temporal, started.workflowId);
    expect(bytes.includes('not approved')).toBe(false);
    expect(personalData(bytes)).toEqual([]);
    const failed = events.find((e) => e.activityTaskFailedEventAttributes)!.activityTaskFailedEventAttributes!.failure!;
    expect(failed.message).toBe('Encoded failure');
    expect(Buffer.from(failed.encodedAttributes!.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
  });

  it('shows a payload in clear through the codec endpoint to an authorised caller only', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'ACME',
      message: TEXT,
    });
    await started.result();
    const { events } = await rawHistory(stack.temporal, started.workflowId);
    const body = JSON.stringify({
      payloads: [toJsonPayload(events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!)],
    });
    const decode = (headers: Record<string, string>) =>
      fetch(`${codec.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-namespace': 'default', ...headers },
        body,
      });

    const authorised = await decode({ authorization: `Bearer ${token}` });
    expect(authorised.status).toBe(200);
    const { payloads } = (await authorised.json()) as { payloads: Array<{ data: string }> };
    const input = JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString('utf8'));
    expect(input).toMatchObject({ recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: TEXT });

    const refused = await decode({});
    expect(refused.status).toBe(401);
    const refusedBody = await refused.text();
    expect(refusedBody).not.toContain(TEXT);
    expect((await decode({ authorization: `Bearer ${generateCodecToken()}` })).status).toBe(401);
  });
});

describe('without a key (control)', () => {
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('the same probe finds the number and the text in the raw history', async () => {
    const started = await stack.msgflow.sendSms({
      recipients: [MAGIC_NUMBERS.delivered],
      sender: 'ACME',
      message: TEXT,
    });
    await started.result();
    const { bytes } = await rawHistory(stack.temporal, started.workflowId);
    expect(personalData(bytes)).toEqual([MAGIC_NUMBERS.delivered, TEXT, 'awaits pickup']);
  });
});
