/**
 * Personal data at rest: with an encryption key, real sends leave no phone number and no text in the
 * histories the Temporal server stores (failure messages included) nor in the message store's SQLite file,
 * while the codec endpoint shows payloads to a caller holding its token and refuses everyone else. A control
 * run without a key proves the probes see plaintext when there is some.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
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
import { signWebhook } from '../../src/api/signature.js';
import { startTestStack } from '../support/stack.js';
import { eventually, listIds, rawHistory } from './support.js';

const NUMBERS = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered];
const TEXT = `Parcel ${randomUUID().slice(0, 8)} awaits pickup at the Lekki depot`;
const personalData = (bytes: Buffer) => [...NUMBERS, TEXT, 'awaits pickup'].filter((needle) => bytes.includes(needle));

/** The store's files as a dump would show them: the database and its write-ahead log, byte for byte. */
function storeFileBytes(dir: string): Buffer {
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
}

/** Every row of every table of the store, as text. */
function storeRows(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
    return JSON.stringify(tables.map(({ name }) => db.prepare(`SELECT * FROM "${name}"`).all()));
  } finally {
    db.close();
  }
}

/** Posts a correctly signed body whose event fails validation: the store keeps it as a rejected event. */
async function postMalformedEvent(stack: RunningStack, number: string): Promise<void> {
  const body = JSON.stringify({ event: 'message.delivered', mobile_number: `+${number}`, status: 'failed' });
  const headers = signWebhook([stack.webhookSecret], `msg_${randomUUID()}`, Math.floor(Date.now() / 1000), body);
  const response = await fetch(stack.ingress.webhookUrl, { method: 'POST', headers, body });
  expect(response.status).toBe(200);
  expect(((await response.json()) as { rejected: unknown[] }).rejected).toHaveLength(1);
}

describe('encrypted histories', () => {
  const encryptionKey = `k1:${generateKey()}`;
  const token = generateCodecToken();
  const storeDir = mkdtempSync(join(tmpdir(), 'msgflow-encrypted-store-'));
  const storeFile = join(storeDir, 'msgflow.db');
  let stack: RunningStack;
  let codec: RunningCodecServer;

  beforeAll(async () => {
    stack = await startTestStack({ encryptionKey, store: { file: storeFile } });
    codec = await startCodecServer({
      codec: new EncryptionCodec(keyRingOf(encryptionKey)),
      tokens: [token],
      allowedOrigins: ['http://localhost:8233'],
    });
  });
  afterAll(async () => {
    await codec?.close();
    await stack?.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('keeps numbers and texts out of every history the runs write, while the keyed client reads the result', async () => {
    const started = await stack.msgflow.sendSms({ recipients: NUMBERS, sender: 'ACME', message: TEXT });
    const result = await started.result();
    expect(result.messages.map((m) => m.mobile_number).sort()).toEqual(NUMBERS.map((n) => `+${n}`).sort());
    const awaited = await stack.msgflow.awaitMessage(result.messages[0]!.provider_message_id);
    await awaited.result();
    const campaign = await stack.msgflow.startCampaign({
      sender: 'ACME',
      message: TEXT,
      audience: { type: 'inline', recipients: NUMBERS },
    });
    await campaign.result();

    // Every workflow the task queue ran (no workflow per message any more: the store holds their state).
    const expected = [started.workflowId, awaited.workflowId, campaign.workflowId].sort();
    const workflowIds = await eventually(async () => {
      const ids = await listIds(stack.temporal, `TaskQueue = '${stack.taskQueue}'`);
      return expected.every((id) => ids.includes(id)) ? ids : undefined;
    }, 'the runs on the task queue');
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

  it('keeps numbers out of the message store at rest, while the store reads them back', async () => {
    const started = await stack.msgflow.sendSms({ recipients: NUMBERS, sender: 'ACME', message: TEXT });
    const result = await started.result();
    await postMalformedEvent(stack, MAGIC_NUMBERS.undelivered);

    // The running store decrypts what it holds...
    const id = result.messages.find((m) => m.mobile_number === `+${MAGIC_NUMBERS.delivered}`)!.provider_message_id;
    expect((await stack.store.message(id))?.number).toBe(`+${MAGIC_NUMBERS.delivered}`);
    expect(await stack.store.messagesTo(`+${MAGIC_NUMBERS.delivered}`)).toContain(id);
    const [rejected] = (await stack.store.rejected({ limit: 1 })).rows;
    expect(JSON.stringify(rejected?.event)).toContain(MAGIC_NUMBERS.undelivered);

    // ...which its rows and its files hold only sealed (the rows do hold the messages).
    const rows = storeRows(storeFile);
    expect(rows).toContain(id);
    expect(personalData(Buffer.from(rows))).toEqual([]);
    expect(personalData(storeFileBytes(storeDir))).toEqual([]);
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
  const storeDir = mkdtempSync(join(tmpdir(), 'msgflow-plain-store-'));
  const storeFile = join(storeDir, 'msgflow.db');
  let stack: RunningStack;
  beforeAll(async () => {
    stack = await startTestStack({ store: { file: storeFile } });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(storeDir, { recursive: true, force: true });
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

  it('the same probes find the numbers in the store rows and files', async () => {
    const started = await stack.msgflow.sendSms({ recipients: NUMBERS, sender: 'ACME', message: TEXT });
    await started.result();
    expect(personalData(Buffer.from(storeRows(storeFile)))).toEqual(NUMBERS);
    expect(personalData(storeFileBytes(storeDir))).toEqual(NUMBERS);
  });
});
