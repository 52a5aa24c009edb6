/**
 * Security: the ingress refuses forged, replayed-stale and other-account deliveries (and applies an
 * in-tolerance replay once); a second account sees none of the first one's records, not even with its
 * cursor; no secret (API token, webhook secret, admin token, OTP code) and no personal data (numbers,
 * texts) reaches any log or any history Temporal stores during real work; and with an encryption key the
 * message store's rows hold no number in clear (the store still reads them back, and finds messages by
 * number). The stack, the worker process and the store all run with the key, as in production.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/api/common.js';
import type { MessageStatusEvent } from '../../src/api/events.js';
import { openApiDocument } from '../../src/api/openapi.js';
import { signWebhook } from '../../src/api/signature.js';
import { SCOPES } from '../../src/api/scopes.js';
import {
  type LogEntry,
  MessagingApiError,
  MessagingClient,
  NotFoundError,
  RateLimitError,
} from '../../src/client/index.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { createLogger } from '../../src/log.js';
import { MAGIC_NUMBERS, VOICE_MAGIC_NUMBERS } from '../../src/sandbox/index.js';
import type { RunningStack } from '../../src/stack.js';
import { generateOtpKeys } from '../../src/crypto/otp-keys.js';
import { rawHistory } from '../ops/support.js';
import { childStoreEnv, startTestStack } from '../support/stack.js';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process.js';
import { printSummary } from './support/summary.js';

const refusals = { forged: 0, stale: 0, otherAccount: 0, unsigned: 0 };
let recordsChecked = 0;
let linesScanned = 0;
let historiesScanned = 0;
let storeRowsScanned = 0;

describe('security', () => {
  let stack: RunningStack;
  let worker: WorkerProcess;
  const stackLog: string[] = [];
  const encryptionKey = `k1:${generateKey()}`;
  const otp = generateOtpKeys();
  /** Workflows whose raw histories are scanned at the end. */
  const historyIds: string[] = [];

  beforeAll(async () => {
    // Everything the stack's own components log, at debug level, is kept and scanned below.
    stack = await startTestStack({
      startWorker: false,
      logger: createLogger('stack', { level: 'debug', write: (line) => stackLog.push(line) }),
      encryptionKey,
      otpKeys: otp.keys,
    });
    worker = startWorkerProcess(stack, {
      ...otp.env,
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_LOG_LEVEL: 'debug',
    });
  });
  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
    printSummary('security', {
      refused: Object.values(refusals).reduce((a, b) => a + b, 0),
      ...refusals,
      crossAccountChecks: recordsChecked,
      logLinesScanned: linesScanned,
      historiesScanned,
      storeRowsScanned,
    });
  });

  const event = (id: string): MessageStatusEvent => ({
    event: 'message.delivered',
    mobile_number: `+${MAGIC_NUMBERS.delivered}`,
    provider_message_id: id,
    status: 'delivered',
    timestamp: formatTimestamp(new Date()),
  });
  const deliver = (raw: string, headers: Record<string, string>) =>
    fetch(stack.ingress.webhookUrl, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: raw,
    });
  /** Whether the store recorded anything about a message (a refused delivery must leave no trace). */
  const recorded = async (id: string) => (await stack.store.message(id)) !== null;

  describe('webhook ingress', () => {
    it('refuses a forged signature, an unsigned body and a stale replay, signalling nothing', async () => {
      const id = `forged-${randomUUID()}`;
      const raw = JSON.stringify(event(id));
      const now = Math.floor(Date.now() / 1000);

      const forgedSecret = `whsec_${Buffer.from(randomUUID()).toString('base64')}`;
      const forged = await deliver(raw, signWebhook([forgedSecret], `evt_${randomUUID()}`, now, raw));
      expect(forged.status).toBe(401);
      expect(await forged.json()).toMatchObject({ code: 'bad_signature' });
      refusals.forged++;

      // A genuine delivery (right secret) captured and replayed ten minutes later.
      const stale = await deliver(raw, signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, now - 600, raw));
      expect(stale.status).toBe(401);
      expect(await stale.json()).toMatchObject({ code: 'stale_timestamp' });
      refusals.stale++;

      // Right signature, body changed afterwards.
      const headers = signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, now, raw);
      const tampered = await deliver(raw.replace('delivered', 'delivereD'), headers);
      expect(tampered.status).toBe(401);
      refusals.forged++;

      const unsigned = await fetch(stack.ingress.webhookUrl, {
        method: 'POST',
        body: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(unsigned.status).toBe(401);
      expect(await unsigned.json()).toMatchObject({ code: 'missing_headers' });
      refusals.unsigned++;

      expect(await recorded(id)).toBe(false);
    });

    it("refuses a delivery signed with another account's webhook secret", async () => {
      const other = await stack.admin.createAccount({ name: 'other', balance: 1000 });
      const { token } = await stack.admin.createToken(other.id, { scopes: ['webhooks'] });
      const otherClient = new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token });
      const registration = await otherClient.webhooks.create({ url: 'http://127.0.0.1:9/elsewhere' });

      const id = `other-account-${randomUUID()}`;
      const raw = JSON.stringify(event(id));
      const response = await deliver(
        raw,
        signWebhook([registration.secret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), raw),
      );
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: 'bad_signature' });
      refusals.otherAccount++;
      expect(await recorded(id)).toBe(false);
    });

    it('applies a replay within the tolerance once: the first final state stays', async () => {
      const id = `replayed-${randomUUID()}`;
      // A workflow already waits for the message: it must be told the first final state, and only that one.
      const waiter = await stack.msgflow.awaitMessage(id);
      await expect.poll(async () => (await stack.store.message(id))?.waiters.length ?? 0, { timeout: 30_000 }).toBe(1);
      const first = JSON.stringify(event(id));
      const firstId = `evt_${randomUUID()}`;
      const headers = signWebhook([stack.webhookSecret], firstId, Math.floor(Date.now() / 1000), first);
      expect((await deliver(first, headers)).status).toBe(200);
      expect((await deliver(first, headers)).status).toBe(200);
      const conflicting = JSON.stringify({ ...event(id), event: 'message.failed', status: 'failed' });
      expect(
        (
          await deliver(
            conflicting,
            signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), conflicting),
          )
        ).status,
      ).toBe(200);
      // The store kept the first final state, from the first delivery.
      expect((await stack.store.message(id))?.final).toMatchObject({ status: 'delivered', eventId: firstId });
      expect(await waiter.result()).toMatchObject({ providerMessageId: id, status: 'delivered', source: 'webhook' });
      historyIds.push(waiter.workflowId);
    });
  });

  describe('account isolation in the provider', () => {
    it("gives a second account's token 404 for every record of the first, and refuses the first's cursor", async () => {
      const owner = stack.messaging; // the stack's account, all scopes
      const sent = await owner.sms.send({
        recipients: [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.failed, MAGIC_NUMBERS.expired],
        sender: 'ACME',
        message: 'isolated',
      });
      const lookup = await owner.lookups.create({ number: `+${MAGIC_NUMBERS.delivered}` });
      const call = await owner.voice.send({ recipient: VOICE_MAGIC_NUMBERS.busy, message: 'isolated call' });
      const otp = await owner.otp.send({ recipient: MAGIC_NUMBERS.delivered });
      const [endpoint] = await owner.webhooks.list().toArray();
      const firstPage = await owner.messages.list({ perPage: 1 }).firstPage();
      expect(firstPage.nextCursor).not.toBeNull();

      const intruderAccount = await stack.admin.createAccount({ name: 'intruder', balance: 1000 });
      const { token } = await stack.admin.createToken(intruderAccount.id, { scopes: [...SCOPES] });
      const intruder = new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token, maxRetries: 0 });

      const attempts: Array<[string, () => Promise<unknown>]> = [
        ['message', () => intruder.messages.get(sent.messages[0]!.provider_message_id)],
        ['campaign', () => intruder.campaigns.get(sent.campaign_id)],
        ['lookup', () => intruder.lookups.get(lookup.id)],
        ['voice call', () => intruder.voice.get(call.id)],
        ['webhook read', () => intruder.webhooks.get(endpoint!.id)],
        ['webhook update', () => intruder.webhooks.update(endpoint!.id, { url: 'http://127.0.0.1:9/stolen' })],
        ['webhook delete', () => intruder.webhooks.delete(endpoint!.id)],
        ['otp verify', () => intruder.otp.verify({ otp_id: otp.otp_id, code: '000000' })],
      ];
      for (const [what, attempt] of attempts) {
        await expect(attempt(), what).rejects.toBeInstanceOf(NotFoundError);
        recordsChecked++;
      }
      // Every 404 above is a documented answer of its operation (otp verify names its record in the body).
      const documented = openApiDocument().paths['/otp/verify']!.post as { responses: Record<string, unknown> };
      expect(Object.keys(documented.responses)).toContain('404');

      // The owner's webhook is untouched, and the intruder's lists hold nothing of the owner's.
      expect((await owner.webhooks.get(endpoint!.id)).url).toBe(stack.ingress.webhookUrl);
      expect(await intruder.messages.list().toArray()).toEqual([]);
      expect(await intruder.campaigns.list().toArray()).toEqual([]);
      expect(await intruder.lookups.list().toArray()).toEqual([]);
      expect(await intruder.webhooks.list().toArray()).toEqual([]);

      const viaCursor = intruder.messages.list({ perPage: 1, cursor: firstPage.nextCursor! }).firstPage();
      await expect(viaCursor).rejects.toBeInstanceOf(MessagingApiError);
      await expect(viaCursor).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
      recordsChecked++;
    });
  });

  describe('secrets and personal data at rest and in logs', () => {
    it('writes no token, secret, code, number or text to any log or history; the store seals its numbers', async () => {
      const clientLog: string[] = [];
      const logger = (entry: LogEntry) => clientLog.push(JSON.stringify(entry));
      const client = new MessagingClient({ baseUrl: stack.sandbox.baseUrl, token: stack.token, logger, maxRetries: 1 });
      const badClient = new MessagingClient({
        baseUrl: stack.sandbox.baseUrl,
        token: `${stack.token}x`,
        logger,
        maxRetries: 0,
      });
      const text = `secret-free text ${randomUUID()}`;
      const smsNumbers = [MAGIC_NUMBERS.delivered, MAGIC_NUMBERS.undelivered];
      const otpRecipient = '2348012345699';

      // Real work through the worker process (debug logging), the ingress and the client.
      const started = await stack.msgflow.sendSms({ recipients: smsNumbers, sender: 'ACME', message: text });
      const result = await started.result();
      expect(result.messages.map((m) => m.status).sort()).toEqual(['delivered', 'undelivered']);
      historyIds.push(started.workflowId);
      const sentOtp = await stack.msgflow.sendOtp({ purpose: 'login', recipient: otpRecipient });
      const [newest] = await stack.admin.inbox(otpRecipient);
      const code = newest?.text.match(/\b(\d{4,10})\b/)?.[1];
      expect(code).toBeDefined();
      expect(await stack.msgflow.verifyOtp({ purpose: 'login', recipient: otpRecipient, code: code! })).toMatchObject({
        status: 'verified',
      });
      historyIds.push(sentOtp.workflowId);
      await client.sms.send({ recipients: [MAGIC_NUMBERS.delivered], sender: 'ACME', message: text });
      await expect(badClient.balance.get()).rejects.toThrow();
      await expect(
        client.sms.send({ recipients: [MAGIC_NUMBERS.delivered], sender: 'NOT_APPROVED', message: text }),
      ).rejects.toThrow();
      // A 429: the account's limit drops to one request a minute for a moment.
      await stack.admin.setRateLimit(stack.accountId!, 1);
      try {
        await client.balance.get({ maxRetries: 0 }).catch(() => undefined);
        await expect(client.balance.get({ maxRetries: 0 })).rejects.toBeInstanceOf(RateLimitError);
      } finally {
        await stack.admin.setRateLimit(stack.accountId!, 60_000);
      }
      // An ingress refusal is logged too, and so is an authentic event that fails validation (kept aside,
      // with its number, in the store's rejected events).
      expect(
        (
          await deliver(
            '{}',
            signWebhook([`whsec_${Buffer.from('x').toString('base64')}`], 'evt_x', Math.floor(Date.now() / 1000), '{}'),
          )
        ).status,
      ).toBe(401);
      const malformed = JSON.stringify({ ...event(`malformed-${randomUUID()}`), status: 'failed' });
      const kept = await deliver(
        malformed,
        signWebhook([stack.webhookSecret], `evt_${randomUUID()}`, Math.floor(Date.now() / 1000), malformed),
      );
      expect(await kept.json()).toMatchObject({ received: 0, rejected: [{ index: 0 }] });

      const numbers = [...smsNumbers, otpRecipient];
      const needles = (withCode: boolean): Record<string, string> => ({
        token: stack.token,
        webhookSecret: stack.webhookSecret,
        adminToken: stack.sandbox.adminToken,
        ...(withCode ? { otpCode: code! } : {}),
        text,
        ...Object.fromEntries(numbers.map((n, i) => [`number ${i + 1}`, n])),
      });

      const logs = { client: clientLog, stack: stackLog, worker: worker.output().split('\n') };
      expect(clientLog.length).toBeGreaterThan(0);
      expect(clientLog.some((line) => line.includes('"status":429'))).toBe(true);
      expect(stackLog.length).toBeGreaterThan(0);
      expect(worker.output()).toContain('worker running');
      for (const [source, lines] of Object.entries(logs)) {
        const all = lines.join('\n');
        linesScanned += lines.length;
        for (const [name, secret] of Object.entries(needles(false))) {
          expect(all.includes(secret), `${name} in the ${source} log`).toBe(false);
        }
        // A code is a few digits, which ids and times hold by chance: looked for as a value of its own.
        expect(all.includes(`"${code}"`) || all.includes(`=${code}`), `the OTP code in the ${source} log`).toBe(false);
      }

      // Histories exactly as the server stores them: payloads sealed by the codec, nothing readable.
      for (const workflowId of historyIds) {
        const { events, bytes } = await rawHistory(stack.temporal, workflowId);
        expect(events.length, workflowId).toBeGreaterThan(2);
        historiesScanned++;
        for (const [name, secret] of Object.entries(needles(true))) {
          expect(bytes.includes(secret), `${name} in the history of ${workflowId}`).toBe(false);
        }
      }

      // The store's rows as the database file holds them: no number in clear, in any table or column.
      // startTestStack keeps the store of a stack without its own worker in a file, encrypted under its key.
      const db = new Database(childStoreEnv(stack).MSGFLOW_STORE_FILE!, { readonly: true, fileMustExist: true });
      try {
        const tables = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
          .all() as { name: string }[];
        for (const { name } of tables) {
          const rows = db.prepare(`SELECT * FROM "${name}"`).all();
          storeRowsScanned += rows.length;
          const all = JSON.stringify(rows);
          for (const n of numbers) expect(all.includes(n), `number ${n} in the store's ${name} table`).toBe(false);
        }
      } finally {
        db.close();
      }
      expect(storeRowsScanned).toBeGreaterThan(0);
      // Sealed, not dropped: the keyed store reads each number back and finds its messages by number.
      for (const message of result.messages) {
        expect((await stack.store.message(message.provider_message_id))?.number).toBe(message.mobile_number);
        expect(await stack.store.messagesTo(message.mobile_number)).toContain(message.provider_message_id);
      }
      const [rejected] = (await stack.store.rejected({ limit: 1 })).rows;
      expect(rejected?.event).toEqual(JSON.parse(malformed));
    });
  });
});
