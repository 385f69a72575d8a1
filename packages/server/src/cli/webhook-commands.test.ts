import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { cliEnv, databaseLine, json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { insertMessages, type WebhookMessageRow } from '../webhooks/index.js';
import { newMessage } from '../webhooks/outbox.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

describe.each(engines())('wallet-checkout webhooks … on %s', (engine) => {
  let database: TestDatabase;
  let db: Db;
  let env: Record<string, string>;
  const cli = (...argv: string[]) => runCli(env, argv);

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = {
      ...cliEnv(engine, database),
    };
    // Migrates the database.
    expect((await cli('migrate')).code).toBe(0);
    db = createDb(env.DATABASE_URL as string);
    for (const id of ['mch_a', 'mch_b', 'mch_c']) await insertMerchantRow(db, id);
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
  });

  /** A message of the merchant, with the columns given. */
  function message(merchantId: string, columns: Partial<WebhookMessageRow>): WebhookMessageRow {
    const row = newMessage(
      { merchantId, eventName: 'PAYMENT_CREDENTIALS', subjectId: 'crq_status', schedule: 'credentials' },
      Date.now(),
      0,
    );
    return { ...row, ...columns };
  }

  it('says nothing is due on an empty outbox', async () => {
    expect(json(await cli('webhooks', 'status', '--json'))).toEqual({
      pending: 0,
      due: 0,
      held: 0,
      oldestDueAt: null,
      failed: 0,
      mostBehind: [],
    });
    expect((await cli('webhooks', 'status')).stdout).toContain('Nothing is due.');
  });

  it('counts what is due and held, the oldest due, what was given up, and who is most behind', async () => {
    const now = Date.now();
    const oldest = now - 10 * MINUTE_MS;
    await insertMessages(db.kysely, [
      message('mch_a', { next_attempt_at: oldest }),
      message('mch_a', { next_attempt_at: now - 30_000, lease_until: now + 30_000 }),
      message('mch_a', { next_attempt_at: now - 10_000 }),
      message('mch_b', { next_attempt_at: now - 5_000 }),
      message('mch_b', { next_attempt_at: now + HOUR_MS, attempt_count: 2 }),
      message('mch_c', { state: 'FAILED', updated_at: now - HOUR_MS }),
      message('mch_c', { state: 'FAILED', updated_at: now - 25 * HOUR_MS }),
      message('mch_c', { state: 'DELIVERED' }),
    ]);

    const iso = (ms: number) => new Date(ms).toISOString();
    expect(json(await cli('webhooks', 'status', '--json'))).toEqual({
      pending: 5,
      due: 4,
      held: 1,
      oldestDueAt: iso(oldest),
      failed: 1,
      mostBehind: [
        { merchantId: 'mch_a', due: 3, oldestDueAt: iso(oldest) },
        { merchantId: 'mch_b', due: 1, oldestDueAt: iso(now - 5_000) },
      ],
    });

    const text = await cli('webhooks', 'status');
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')).toEqual([
      'Pending webhook messages: 5',
      '  due now: 4 (1 of them held by a delivering process)',
      '  waiting for a later retry: 1',
      `Longest-waiting due message: due since ${new Date(oldest).toISOString()} (10 min)`,
      'Given up (FAILED) in the last 24 hours: 1',
      'Merchants with the most due:',
      'merchant  due  due since',
      `mch_a     3    ${new Date(oldest).toISOString()}`,
      `mch_b     1    ${new Date(now - 5_000).toISOString()}`,
      '',
    ]);
  });

  it('sends again what was given up since a time, for one merchant or all, and refuses a time without a zone', async () => {
    const now = Date.now();
    const since = now - 30 * MINUTE_MS;
    const rows = {
      a: [
        message('mch_a', { state: 'FAILED', updated_at: now - 10 * MINUTE_MS }),
        message('mch_a', { state: 'FAILED', updated_at: now - 9 * MINUTE_MS }),
      ],
      b: message('mch_b', { state: 'FAILED', updated_at: now - 5 * MINUTE_MS }),
      bBefore: message('mch_b', { state: 'FAILED', updated_at: now - 2 * HOUR_MS }),
    };
    await insertMessages(db.kysely, [...rows.a, rows.b, rows.bBefore]);
    const iso = new Date(since).toISOString();
    const stateOf = async (id: string) =>
      (
        await db.kysely
          .selectFrom('webhook_messages')
          .select('state')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).state;

    expect(json(await cli('webhooks', 'recover', '--since', iso, '--merchant', 'mch_b', '--json'))).toEqual({
      recovered: 1,
      notSent: 0,
    });
    expect(await stateOf(rows.b.id)).toBe('PENDING');
    expect(await stateOf(rows.a[0]?.id as string)).toBe('FAILED');

    const all = await cli('webhooks', 'recover', '--since', iso);
    expect(all).toEqual({
      code: 0,
      stdout: `Sent again 2 webhook message(s) of every merchant given up since ${iso}.\n`,
      stderr: databaseLine(env.DATABASE_URL as string),
    });
    for (const row of rows.a) expect(await stateOf(row.id)).toBe('PENDING');
    expect(await stateOf(rows.bBefore.id)).toBe('FAILED');
    expect(json(await cli('webhooks', 'recover', '--since', iso, '--json'))).toEqual({
      recovered: 0,
      notSent: 0,
    });

    for (const bad of ['yesterday', '2026-11-25T08:00:00', '2026-11-25']) {
      const refused = await cli('webhooks', 'recover', '--since', bad);
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr).toContain('--since must be an RFC 3339 time with its zone');
    }
    expect((await cli('webhooks', 'recover')).code).toBe(2);
    const unknown = await cli('webhooks', 'recover', '--since', iso, '--merchant', 'mch_nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('merchant mch_nobody does not exist');
  });
});
