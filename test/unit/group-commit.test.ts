/** The ingress's group commit over a real message store (SQLite in memory), its writes counted. */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GroupCommit } from '../../src/ingress/group-commit.js';
import { type MessageStore, openMessageStore, type StatusEventRecord } from '../../src/store/index.js';

let store: MessageStore;
let writes: number[];
let writer: GroupCommit;

beforeEach(async () => {
  store = await openMessageStore({ file: ':memory:' });
  await store.register('campaign-a', [{ providerMessageId: 'a1' }, { providerMessageId: 'a2' }]);
  await store.register('campaign-b', [{ providerMessageId: 'b1' }]);
  writes = [];
  writer = new GroupCommit({
    recordEvents: (events) => {
      writes.push(events.length);
      return store.recordEvents(events);
    },
  });
});
afterEach(async () => {
  await store.close();
});

const delivered = (id: string, eventId = `evt_${id}`): StatusEventRecord => ({
  providerMessageId: id,
  status: 'delivered',
  timestamp: '2026-01-01T00:00:00Z',
  eventId,
});

it('writes what arrives in one turn of the event loop in one transaction; each caller gets its own waiters', async () => {
  const first = writer.record([delivered('a1')]);
  const [second, third, fourth] = [
    writer.record([delivered('a2')]),
    writer.record([delivered('b1')]),
    writer.record([delivered('nobody-waits')]),
  ];
  // Both of campaign-a's messages are final after the shared write: each caller hears it waits for nothing else.
  expect(await first).toEqual([
    { workflowId: 'campaign-a', outcomes: [expect.objectContaining({ providerMessageId: 'a1' })], allFinal: true },
  ]);
  expect(await second).toEqual([
    { workflowId: 'campaign-a', outcomes: [expect.objectContaining({ providerMessageId: 'a2' })], allFinal: true },
  ]);
  expect(await third).toEqual([
    { workflowId: 'campaign-b', outcomes: [expect.objectContaining({ providerMessageId: 'b1' })], allFinal: true },
  ]);
  expect(await fourth).toEqual([]);
  expect(writes).toEqual([4]);
  expect((await store.message('nobody-waits'))?.final?.status).toBe('delivered');
});

it('what arrives while a write runs goes in the next one', async () => {
  const first = writer.record([delivered('a1')]);
  await new Promise((resolve) => setImmediate(resolve));
  const second = writer.record([delivered('a2')]);
  const third = writer.record([delivered('b1')]);
  await Promise.all([first, second, third]);
  expect(writes).toEqual([1, 2]);
});

it('a group that fails is written delivery by delivery: only the bad one gets the error', async () => {
  const first = writer.record([delivered('a1')]);
  const bad = writer.record([delivered('x'.repeat(500))]);
  const good = writer.record([delivered('b1')]);
  await first;
  await expect(bad).rejects.toThrow(/provider_message_id|providerMessageId|id/i);
  expect(await good).toEqual([
    { workflowId: 'campaign-b', outcomes: [expect.objectContaining({ providerMessageId: 'b1' })], allFinal: true },
  ]);
  expect(writes).toEqual([3, 1, 1, 1]);
});

it('with a gathering window, deliveries read in later turns of the event loop within it share the write', async () => {
  const gathering = new GroupCommit(
    {
      recordEvents: (events) => {
        writes.push(events.length);
        return store.recordEvents(events);
      },
    },
    50,
  );
  const first = gathering.record([delivered('a1')]);
  await new Promise((resolve) => setImmediate(resolve));
  const second = gathering.record([delivered('a2')]);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const third = gathering.record([delivered('b1')]);
  await Promise.all([first, second, third]);
  expect(writes).toEqual([3]);
});
