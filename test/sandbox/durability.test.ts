/** Restarting on the same --db keeps every record and resumes pending carrier moves and webhook deliveries. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor, eventually, manualClock, sms } from './helpers.js';
import { type Receiver, startReceiver } from './receiver.js';

describe('durability', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-durability-'));
  let running: TestSandbox | undefined;
  let receiver: Receiver | undefined;
  const start = async (file: string, options: Parameters<typeof startTestSandbox>[0] = {}) => {
    running = await startTestSandbox({ db: join(dir, file), ...options });
    return running;
  };
  const stop = async () => {
    await running?.close();
    running = undefined;
  };
  afterEach(async () => {
    await stop();
    await receiver?.close();
    receiver = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps accounts, tokens, balances, messages, ledger, webhooks, idempotency records and cursors', async () => {
    const first = await start('records.db');
    const { accountId, token } = await first.newAccount({ balance: 500 });
    let api = apiFor(first.sandbox.baseUrl, token);
    const sent = await api('POST', '/sms/send', sms(['12025550100', '12025550111', '12025550112']), {
      'Idempotency-Key': 'before-restart',
    });
    const hook = (await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/h' })).body.data;
    const page = (await api('GET', '/messages?per_page=2')).body;
    const balance = (await api('GET', '/balance')).body.data;
    const ledger = await first.admin.ledger(accountId);
    await stop();

    const second = await start('records.db');
    api = apiFor(second.sandbox.baseUrl, token);
    expect((await api('GET', '/balance')).body.data).toEqual(balance);
    expect(await second.admin.ledger(accountId)).toEqual(ledger);
    const replay = await api('POST', '/sms/send', sms(['12025550100', '12025550111', '12025550112']), {
      'Idempotency-Key': 'before-restart',
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(sent.body);
    const next = await api('GET', `/messages?per_page=2&cursor=${encodeURIComponent(page.next_cursor)}`);
    expect(next.status).toBe(200);
    expect(next.body.data.map((m: { id: string }) => m.id)).toEqual([sent.body.data.messages[0].provider_message_id]);
    expect((await api('GET', `/webhooks/${hook.id}`)).body.data.url).toBe(hook.url);
    expect((await api('GET', `/campaigns/${sent.body.data.campaign_id}`)).status).toBe(200);
  });

  it('resumes pending carrier transitions after a restart', async () => {
    const clock = manualClock();
    const first = await start('carrier.db', { now: clock.now, carrier: { submitMs: 1_000, finalMs: 1_000 } });
    const { token } = await first.newAccount();
    const sent = (await apiFor(first.sandbox.baseUrl, token)('POST', '/sms/send', sms(['12025550100', '12025550101'])))
      .body.data;
    await stop();

    clock.advance(5_000);
    const second = await start('carrier.db', { now: clock.now, carrier: { submitMs: 1_000, finalMs: 1_000 } });
    const api = apiFor(second.sandbox.baseUrl, token);
    const ids = sent.messages.map((m: { provider_message_id: string }) => m.provider_message_id);
    await eventually(
      () => api('GET', `/messages/${ids[0]}`),
      (r) => r.body.data.status === 'sent',
    );
    clock.advance(1_000);
    const [delivered, undelivered] = [
      await eventually(
        () => api('GET', `/messages/${ids[0]}`),
        (r) => r.body.data.status === 'delivered',
      ),
      await eventually(
        () => api('GET', `/messages/${ids[1]}`),
        (r) => r.body.data.status === 'undelivered',
      ),
    ];
    expect(delivered.body.data.history.map((h: { status: string }) => h.status)).toEqual([
      'queued',
      'sent',
      'delivered',
    ]);
    expect(undelivered.body.data.history).toHaveLength(3);
  });

  it('resumes pending webhook deliveries after a restart, under the same webhook-id', async () => {
    const clock = manualClock(Date.now());
    const options = {
      now: clock.now,
      carrier: { submitMs: 0, finalMs: 0 },
      webhooks: { retryScheduleMs: [1_000, 1_000] },
    };
    receiver = await startReceiver();
    receiver.answer = () => ({ status: 500 });
    const first = await start('webhooks.db', options);
    const { token } = await first.newAccount();
    const api = apiFor(first.sandbox.baseUrl, token);
    await api('POST', '/webhooks', { url: receiver.url });
    await api('POST', '/sms/send', sms(['12025550100']));
    await eventually(
      async () => receiver!.received.length,
      (n) => n === 1,
    );
    await stop();

    receiver.answer = () => ({ status: 200 });
    clock.advance(1_000);
    await start('webhooks.db', options);
    await eventually(
      async () => receiver!.received.length,
      (n) => n === 2,
    );
    expect(receiver.received[1]!.webhookId).toBe(receiver.received[0]!.webhookId);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
  });

  it('releases an Idempotency-Key whose request died with the previous process', async () => {
    const first = await start('crash.db');
    const { accountId, token } = await first.newAccount();
    await stop();
    // What a crash mid-request leaves behind: a claimed key whose transaction never committed.
    const db = new Database(join(dir, 'crash.db'));
    db.prepare(
      "INSERT INTO idempotency_keys (account_id, key, request_hash, state, created_at, expires_at) VALUES (?, 'crashed', 'x', 'in_progress', ?, ?)",
    ).run(accountId, Date.now(), Date.now() + 86_400_000);
    db.close();
    const second = await start('crash.db');
    const reply = await apiFor(second.sandbox.baseUrl, token)('POST', '/sms/send', sms(['12025550100']), {
      'Idempotency-Key': 'crashed',
    });
    expect(reply.status).toBe(202);
  });
});
