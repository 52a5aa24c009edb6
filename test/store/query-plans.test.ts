/**
 * How SQLite plans the statements that take a list of message ids: each id must be one lookup by key, never
 * a scan of a workflow's rows per batch of ids, which grows with the square of a campaign's size (a backlog
 * of 100,000 untold outcomes told in signals of 8,000, batches of 500); whether a workflow still waits for
 * anything is one lookup in the index of pending waiters. The statements are the store's own,
 * recorded as it runs them, and explained with their own parameters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Driver, Executor, SqlValue } from '../../src/store/driver.js';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { PersonalData } from '../../src/store/personal-data.js';
import { sqlMessageStore } from '../../src/store/sql-store.js';
import { openSqliteDriver } from '../../src/store/sqlite-driver.js';

interface Statement {
  sql: string;
  params: readonly SqlValue[];
}

/** The driver, with every statement its transactions run recorded. */
function recording(driver: Driver, statements: Statement[]): Driver {
  const wrap = (tx: Executor): Executor => ({
    all(sql, params = []) {
      statements.push({ sql, params });
      return tx.all(sql, params);
    },
    run(sql, params = []) {
      statements.push({ sql, params });
      return tx.run(sql, params);
    },
    exec: (sql) => tx.exec(sql),
  });
  return { ...driver, transaction: (fn) => driver.transaction((tx) => fn(wrap(tx))) };
}

describe('query plans of statements over lists of message ids (SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('marking told, releasing and registering look each id up by key; pending waiters are found by index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'msgflow-plans-'));
    dirs.push(dir);
    const driver = await openSqliteDriver(join(dir, 'store.db'), 1000);
    await migrate(driver, MIGRATIONS);
    const statements: Statement[] = [];
    const store = sqlMessageStore(recording(driver, statements), new PersonalData(undefined));
    try {
      const ids = Array.from({ length: 20 }, (_, i) => `m${i}`);
      await store.register(
        'wf',
        ids.map((providerMessageId) => ({ providerMessageId })),
      );
      await store.recordEvents(
        ids.map((providerMessageId) => ({ providerMessageId, status: 'delivered', timestamp: '2026-01-01T00:00:00Z' })),
      );
      const claimed = await store.outbox.claim(['wf'], {
        owner: 'relay',
        leaseMs: 10_000,
        minIntervalMs: 0,
        maxOutcomes: 10,
      });
      const told = claimed.outcomes[0]!.outcomes.map((o) => o.providerMessageId);
      await store.outbox.finish('relay', {
        told: [{ workflowId: 'wf', providerMessageIds: told }],
        ended: [],
        refused: [],
        failed: [],
      });
      await store.release('wf', ['m19']);
      await store.register('wf', [{ providerMessageId: 'm18' }]);

      /** Each statement's plan, with the statement beside it so a failure names it. */
      const plans = (chosen: Statement[]) =>
        Promise.all(
          chosen.map(async ({ sql, params }) => {
            const plan = await driver.read((tx) => tx.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params));
            return { sql, plan: plan.map((p) => p.detail).join('; ') };
          }),
        );
      const planned = (chosen: Statement[], plan: RegExp) =>
        chosen.map(({ sql }) => ({ sql, plan: expect.stringMatching(plan) }));

      // "Does it still wait for anything?" (recording, and an early claim): the index of pending waiters.
      const pending = statements.filter((s) => /told_at IS NULL AND \w*\.?released_at IS NULL/.test(s.sql));
      expect(pending.length).toBeGreaterThanOrEqual(2);
      expect(await plans(pending)).toEqual(
        planned(pending, /SEARCH \w+ USING (COVERING )?INDEX waiters_pending_by_workflow \(workflow_id=\?\)/),
      );

      const byIds = statements.filter((s) => /^\s*UPDATE waiters[\s\S]*provider_message_id IN \(/.test(s.sql));
      expect(byIds.length).toBeGreaterThanOrEqual(4);
      expect(await plans(byIds)).toEqual(
        planned(byIds, /^SEARCH waiters USING INDEX sqlite_autoindex_waiters_1 \(provider_message_id=\?/),
      );
    } finally {
      await driver.close();
    }
  });
});
