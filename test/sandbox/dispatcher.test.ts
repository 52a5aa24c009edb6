/**
 * The webhook dispatcher refills its concurrency as soon as a delivery finishes, so the receiver, not the
 * sandbox's tick, sets the pace: one tick with a concurrency of one delivers every due body.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/sandbox/db.js';
import { WebhookDispatcher } from '../../src/sandbox/dispatcher.js';
import { waitFor } from '../support/wait-for.js';
import { type Receiver, startReceiver } from './receiver.js';

describe('webhook dispatcher', () => {
  let receiver: Receiver | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  let db: Db | undefined;
  afterEach(async () => {
    await dispatcher?.close();
    await receiver?.close();
    db?.close();
  });

  it('starts the next due delivery when one finishes, without waiting for the next tick', async () => {
    receiver = await startReceiver();
    db = await openDatabase(':memory:');
    db.pragma('foreign_keys = OFF');
    const now = Date.now();
    db.prepare(
      "INSERT INTO webhooks (id, account_id, url, events, batch, secret, created_at) VALUES ('wh_1', 'acc_1', ?, '[]', 0, ?, ?)",
    ).run(receiver.url, `whsec_${Buffer.alloc(24, 7).toString('base64')}`, now);
    const insert = db.prepare(
      "INSERT INTO deliveries (id, webhook_id, body, state, next_attempt_at, created_at) VALUES (?, 'wh_1', ?, 'pending', ?, ?)",
    );
    for (let i = 0; i < 5; i++) insert.run(`evt_${i}`, JSON.stringify({ n: i }), now, now);

    dispatcher = new WebhookDispatcher(
      db,
      { retryScheduleMs: [60_000], timeoutMs: 5_000, batchMax: 100, concurrency: 1 },
      Date.now,
    );
    dispatcher.tick(); // the only tick: no background loop runs in this test

    await waitFor(() => receiver!.received.length === 5, 'five deliveries after one tick', { timeoutMs: 10_000 });
    expect(receiver.received.map((d) => d.webhookId)).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4']);
    const delivered = () => db!.prepare("SELECT count(*) AS n FROM deliveries WHERE state = 'delivered'").get();
    await waitFor(() => (delivered() as { n: number }).n === 5, 'five deliveries recorded as delivered');
  });
});
