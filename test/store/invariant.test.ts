/**
 * The store's invariant: of an event and the registration of its message, whichever is written second sees
 * the first, so the outcome reaches the waiting workflow in every order: event first, registration first,
 * and both at once. "At once" is forced: one side's transaction parks after its write, before its read, and
 * the other side starts then. A correct store makes the second writer wait for the first's row lock, so it
 * reads after the first commits. A store that read without that lock (or before writing) would let both
 * read while neither had committed, and the outcome would be lost: these tests would fail.
 *
 * PostgreSQL: separate connection pools in this process. SQLite: separate processes on one file (its
 * writers wait for each other synchronously, which one process cannot do with itself).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FinalOutcome,
  type MessageStore,
  MIGRATIONS,
  openMessageStore,
  type StoreHooks,
  type WaiterOutcomes,
} from '../../src/store/index.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/store-process.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../..', import.meta.url));

type Op = 'register' | 'recordEvents';
const WAITER = 'wf-waiting';
/** How long the parked side waits for the other to reach its own write, at most. */
const PARK_MS = 300;

const event = (id: string) => ({ providerMessageId: id, status: 'delivered', timestamp: 't-final', eventId: 'evt' });

/** Did the outcome of `id` reach WAITER through either path? */
function delivered(id: string, registered: FinalOutcome[], recorded: WaiterOutcomes[]): boolean {
  const viaRegistration = registered.some((o) => o.providerMessageId === id);
  const viaEvent = recorded.some((w) => w.workflowId === WAITER && w.outcomes.some((o) => o.providerMessageId === id));
  return viaRegistration || viaEvent;
}

/**
 * Parks the first transaction that reaches its write until the other side reached its own (both wrote, an
 * unsafe store now loses the outcome) or PARK_MS passed (a safe store holds the other side on the row lock).
 */
class Rendezvous {
  armed = false;
  private readonly arrived = new Map<Op, () => void>();
  private readonly arrivals = new Map<Op, Promise<void>>();
  firstParked!: Promise<Op>;
  private parked!: (op: Op) => void;

  constructor() {
    for (const op of ['register', 'recordEvents'] as const)
      this.arrivals.set(op, new Promise((resolve) => this.arrived.set(op, resolve)));
    this.firstParked = new Promise((resolve) => (this.parked = resolve));
  }

  hooks: StoreHooks = {
    afterWrite: async (op) => {
      if (!this.armed) return;
      this.arrived.get(op)!();
      this.parked(op);
      const other = op === 'register' ? 'recordEvents' : 'register';
      await Promise.race([this.arrivals.get(other), new Promise((r) => setTimeout(r, PARK_MS))]);
    },
  };
}

describe('the invariant on PostgreSQL (separate connections)', () => {
  let server: TestPostgres;
  let databases = 0;
  const opened: MessageStore[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await Promise.allSettled(opened.map((s) => s.close()));
    await server?.destroy();
  });

  /** Two stores (a sender's and the ingress's) on a fresh database, sharing one rendezvous. */
  async function pair() {
    const url = await server.createDatabase(`invariant_${++databases}`);
    const rendezvous = new Rendezvous();
    const sender = await openMessageStore({ url, hooks: rendezvous.hooks });
    const ingress = await openMessageStore({ url, hooks: rendezvous.hooks });
    opened.push(sender, ingress);
    return { sender, ingress, rendezvous };
  }

  it('event first: the registration returns the outcome', async () => {
    const { sender, ingress } = await pair();
    expect(await ingress.recordEvents([event('m1')])).toEqual([]);
    expect((await sender.register(WAITER, [{ providerMessageId: 'm1' }])).map((o) => o.providerMessageId)).toEqual([
      'm1',
    ]);
  });

  it('registration first: the event returns the outcome for the waiter', async () => {
    const { sender, ingress } = await pair();
    expect(await sender.register(WAITER, [{ providerMessageId: 'm1' }])).toEqual([]);
    expect((await ingress.recordEvents([event('m1')]))[0]?.workflowId).toBe(WAITER);
  });

  // "known": a non-final event made the message row exist before; "new": neither side finds a row.
  describe.each([
    ['new', false],
    ['known', true],
  ])('both at once, message %s', (_, known) => {
    for (const first of ['register', 'recordEvents'] as const)
      it(`${first} parked after its write while the other side writes`, async () => {
        const { sender, ingress, rendezvous } = await pair();
        if (known) await ingress.recordEvents([{ providerMessageId: 'm1', status: 'sent', timestamp: 't-sent' }]);
        rendezvous.armed = true;
        const register = () => sender.register(WAITER, [{ providerMessageId: 'm1' }]);
        const record = () => ingress.recordEvents([event('m1')]);

        const firstResult = first === 'register' ? register() : record();
        expect(await rendezvous.firstParked).toBe(first);
        const secondResult = first === 'register' ? record() : register();
        const [a, b] = await Promise.all([firstResult, secondResult]);
        const [registered, recorded] = (first === 'register' ? [a, b] : [b, a]) as [FinalOutcome[], WaiterOutcomes[]];

        expect(delivered('m1', registered, recorded)).toBe(true);
        expect(await sender.outcomes(['m1'])).toEqual([
          { providerMessageId: 'm1', status: 'delivered', timestamp: 't-final', eventId: 'evt' },
        ]);
      });
  });

  it('retention racing a registration keeps the message it registers', async () => {
    const { sender, ingress, rendezvous } = await pair();
    await ingress.recordEvents([{ providerMessageId: 'm1', status: 'sent', timestamp: 't-sent' }]);
    rendezvous.armed = true;
    const registered = sender.register(WAITER, [{ providerMessageId: 'm1' }]);
    await rendezvous.firstParked;
    // Everything counts as old; the registration holds the row and has not committed its waiter yet.
    const purged = ingress.purge({ olderThan: new Date(Date.now() + 60 * 60 * 1000) });
    await registered;
    expect(await purged).toEqual({ messages: 0, rejectedEvents: 0, otpEvents: 0 });
    expect((await sender.message('m1'))?.waiters.map((w) => w.workflowId)).toEqual([WAITER]);
  });

  it('many messages, registrations and events racing from four connections: every outcome arrives', async () => {
    const url = await server.createDatabase(`invariant_${++databases}`);
    const stores = await Promise.all([1, 2, 3, 4].map(() => openMessageStore({ url })));
    opened.push(...stores);
    const ids = Array.from({ length: 200 }, (_, i) => `race-${i}`);
    const registered: FinalOutcome[] = [];
    const recorded: WaiterOutcomes[] = [];
    // Each message is registered (in groups of 10, as a sender would) and finalised (one event per body),
    // through different connections, all at once.
    await Promise.all([
      ...Array.from({ length: 20 }, (_, g) =>
        stores[g % 4]!.register(
          WAITER,
          ids.slice(g * 10, g * 10 + 10).map((providerMessageId) => ({ providerMessageId })),
        ).then((r) => registered.push(...r)),
      ),
      ...ids.map((id, i) => stores[(i + 1) % 4]!.recordEvents([event(id)]).then((r) => recorded.push(...r))),
    ]);
    expect(ids.filter((id) => !delivered(id, registered, recorded))).toEqual([]);
  });
});

describe('the invariant on SQLite (separate processes on one file)', () => {
  let folder: string;
  let files = 0;
  const children: ChildProcessWithoutNullStreams[] = [];
  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'msgflow-invariant-'));
  });
  afterAll(() => {
    for (const child of children) child.kill();
    rmSync(folder, { recursive: true, force: true });
  });

  /** A child process running one store operation (test/store/fixtures/store-process.ts). */
  function child(args: Record<string, unknown>) {
    const proc = spawn(process.execPath, ['--import', 'tsx', FIXTURE, JSON.stringify(args)], { cwd: REPO });
    children.push(proc);
    const lines: string[] = [];
    const listeners: (() => void)[] = [];
    let stderr = '';
    proc.stderr.on('data', (d) => (stderr += String(d)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      lines.push(line);
      listeners.forEach((l) => l());
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    const saw = (prefix: string) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          const line = lines.find((l) => l.startsWith(prefix));
          if (line) resolve(line);
        };
        listeners.push(check);
        check();
        void exited.then((code) => reject(new Error(`child exited (${code}) before "${prefix}": ${stderr}`)));
      });
    return {
      saw,
      send: (line: string) => proc.stdin.write(`${line}\n`),
      result: async <T>() => JSON.parse((await saw('result ')).slice('result '.length)) as T,
    };
  }

  const newFile = () => join(folder, `store-${++files}.db`);

  it('several processes opening a new file at once migrate it once', async () => {
    const file = newFile();
    const openers = [1, 2, 3].map(() => child({ file, op: 'open' }));
    await Promise.all(openers.map((o) => o.saw('ready')));
    openers.forEach((o) => o.send('go'));
    expect(await Promise.all(openers.map((o) => o.result()))).toEqual([null, null, null]);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length });
    db.close();
  });

  it('event first, then registration in another process: the registration returns it', async () => {
    const file = newFile();
    const ingress = child({ file, op: 'recordEvents', ids: ['m1'] });
    await ingress.saw('ready');
    ingress.send('go');
    expect(await ingress.result()).toEqual([]);
    const sender = child({ file, op: 'register', workflowId: WAITER, ids: ['m1'] });
    await sender.saw('ready');
    sender.send('go');
    expect(delivered('m1', await sender.result<FinalOutcome[]>(), [])).toBe(true);
  });

  it('registration first, then the event in another process: the event returns it', async () => {
    const file = newFile();
    const sender = child({ file, op: 'register', workflowId: WAITER, ids: ['m1'] });
    await sender.saw('ready');
    sender.send('go');
    expect(await sender.result()).toEqual([]);
    const ingress = child({ file, op: 'recordEvents', ids: ['m1'] });
    await ingress.saw('ready');
    ingress.send('go');
    expect(delivered('m1', [], await ingress.result<WaiterOutcomes[]>())).toBe(true);
  });

  for (const first of ['register', 'recordEvents'] as const)
    it(`both at once: ${first} parked after its write while the other process writes`, async () => {
      const file = newFile();
      const spec = (op: string, park: boolean) => ({ file, op, workflowId: WAITER, ids: ['m1'], park, parkMs: 3000 });
      const parked = child(spec(first, true));
      const other = child(spec(first === 'register' ? 'recordEvents' : 'register', false));
      await Promise.all([parked.saw('ready'), other.saw('ready')]);
      parked.send('go');
      await parked.saw('parked');
      other.send('go');
      await other.saw('calling');
      // The other process is now in its write (waiting for the lock, if the store is right); let the parked
      // one finish after a moment, as the PostgreSQL rendezvous does.
      await new Promise((r) => setTimeout(r, PARK_MS));
      parked.send('continue');
      const [a, b] = await Promise.all([parked.result(), other.result()]);
      const [registered, recorded] = (first === 'register' ? [a, b] : [b, a]) as [FinalOutcome[], WaiterOutcomes[]];
      expect(delivered('m1', registered, recorded)).toBe(true);
    });
});
