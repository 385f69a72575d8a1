import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Db } from '../db/index.js';
import { DomainError } from '../errors.js';
import { newId } from '../ids.js';
import { engines, openTestDb } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { insertMessages, newMessage, type WebhookMessageRow } from './outbox.js';
import { type AttemptResult, type LeasedMessage, toLeased, WebhookRepo } from './repo.js';

const MERCHANT = 'mch_repo_a';
const OTHER_MERCHANT = 'mch_repo_b';

function message(overrides: Partial<WebhookMessageRow> = {}, now = 1_000, leaseMs = 0): WebhookMessageRow {
  return {
    ...newMessage(
      { merchantId: MERCHANT, eventName: 'PAYMENT_CREDENTIALS', subjectId: 'crq_1', schedule: 'credentials' },
      now,
      leaseMs,
    ),
    ...overrides,
  };
}

function result(leased: LeasedMessage, overrides: Partial<AttemptResult> = {}): AttemptResult {
  return {
    messageId: leased.id,
    leaseUntil: leased.leaseUntil,
    attempt: { id: newId('webhookAttempt'), attemptedAt: 2_000, statusCode: 200, latencyMs: 12, error: null },
    from: 'PENDING',
    state: 'DELIVERED',
    attemptCount: leased.attemptCount + 1,
    nextAttemptAt: 2_000,
    lastError: null,
    at: 2_000,
    ...overrides,
  };
}

describe.each(engines())('webhook repo on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let db: Db;
  let repo: WebhookRepo;

  beforeAll(async () => {
    handle = await openTestDb(engine);
    db = handle.db;
    repo = new WebhookRepo(db);
    await insertMerchantRow(db, MERCHANT);
    await insertMerchantRow(db, OTHER_MERCHANT);
  });
  afterAll(() => handle.close());
  beforeEach(async () => {
    await db.kysely.deleteFrom('webhook_attempts').execute();
    await db.kysely.deleteFrom('webhook_messages').execute();
  });

  it('writes outbox rows inside the caller’s transaction, and not at all when it rolls back', async () => {
    const kept = message();
    const dropped = message();
    await db.kysely.transaction().execute((trx) => insertMessages(trx, [kept]));
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await insertMessages(trx, [dropped]);
        throw new Error('the domain change failed');
      }),
    ).rejects.toThrow('the domain change failed');
    const states = await repo.states([kept.id, dropped.id]);
    expect([...states]).toEqual([[kept.id, 'PENDING']]);
    expect(kept).toMatchObject({ state: 'PENDING', attempt_count: 0, next_attempt_at: 1_000 });
    expect(kept.id).toMatch(/^msg_/);
  });

  it('finds when the first PENDING message falls due, or the first after a time', async () => {
    expect(await repo.firstDueAt()).toBeUndefined();
    await insertMessages(db.kysely, [
      message({ next_attempt_at: 500, state: 'DELIVERED' }),
      message({ next_attempt_at: 800, state: 'FAILED' }),
      message({ next_attempt_at: 3_000 }),
      message({ next_attempt_at: 1_500 }),
    ]);
    expect(await repo.firstDueAt()).toBe(1_500);
    expect(await repo.firstDueAt(1_500)).toBe(3_000);
    expect(await repo.firstDueAt(3_000)).toBeUndefined();
  });

  it('inserts several messages in one statement and accepts an empty list', async () => {
    await insertMessages(db.kysely, []);
    const rows = [message(), message(), message()];
    await insertMessages(db.kysely, rows);
    expect((await repo.states(rows.map((row) => row.id))).size).toBe(3);
  });

  it('claims only due messages whose lease has run out, and leases them', async () => {
    const due = message({ next_attempt_at: 900, lease_until: 900 });
    const notYet = message({ next_attempt_at: 1_500, lease_until: 0 });
    const leased = message({ next_attempt_at: 900, lease_until: 1_200 });
    const delivered = message({ state: 'DELIVERED', next_attempt_at: 900, lease_until: 0 });
    await insertMessages(db.kysely, [due, notYet, leased, delivered]);

    const claimed = await repo.claimDue(1_000, 30_000, 10);
    expect(claimed).toEqual([
      {
        id: due.id,
        merchantId: MERCHANT,
        eventName: 'PAYMENT_CREDENTIALS',
        subjectId: 'crq_1',
        schedule: 'credentials',
        attemptCount: 0,
        nextAttemptAt: 900,
        leaseUntil: 31_000,
      },
    ]);
    expect(await repo.claimDue(1_000, 30_000, 10)).toEqual([]);
    expect((await repo.claimDue(1_300, 30_000, 10)).map((m) => m.id)).toEqual([leased.id]);
    expect(await repo.claimDue(1_000, 30_000, 0)).toEqual([]);
  });

  it('claims at most the limit, the longest overdue first', async () => {
    const rows = [500, 100, 300, 200].map((at) => message({ next_attempt_at: at }));
    await insertMessages(db.kysely, rows);
    const claimed = await repo.claimDue(1_000, 30_000, 2);
    // RETURNING gives no order: what matters is which ones were chosen.
    expect(new Set(claimed.map((m) => m.id))).toEqual(new Set([rows[1]?.id, rows[3]?.id]));
  });

  it('claims past the merchants it is told to skip, however overdue their messages are', async () => {
    const skipped = [100, 200, 300].map((at) => message({ next_attempt_at: at }));
    const other = message({ merchant_id: OTHER_MERCHANT, next_attempt_at: 900 });
    await insertMessages(db.kysely, [...skipped, other]);
    expect((await repo.claimDue(1_000, 30_000, 2, [MERCHANT])).map((m) => m.id)).toEqual([other.id]);
    const rest = await repo.claimDue(1_000, 30_000, 10, []);
    expect(new Set(rest.map((m) => m.id))).toEqual(new Set(skipped.map((row) => row.id)));
  });

  it('hands leases back only where the lease is still the one held', async () => {
    const mine = message({}, 1_000, 30_000);
    const takenOver = message({}, 1_000, 30_000);
    await insertMessages(db.kysely, [mine, takenOver]);
    const [a, b] = [mine, takenOver].map(toLeased);
    await db.kysely
      .updateTable('webhook_messages')
      .set({ lease_until: 99_000 })
      .where('id', '=', takenOver.id)
      .execute();
    await repo.release([a as LeasedMessage, b as LeasedMessage], 1_500);
    expect((await repo.claimDue(1_500, 1_000, 10)).map((m) => m.id)).toEqual([mine.id]);
  });

  it('records a batch of results in one go, fenced by the lease', async () => {
    await insertMessages(db.kysely, [message(), message(), message()]);
    const [ok, retry, stale] = await repo.claimDue(1_000, 30_000, 10);
    if (!ok || !retry || !stale) throw new Error('expected three claimed messages');
    await repo.recordResults([
      result(ok),
      result(retry, {
        state: 'PENDING',
        nextAttemptAt: 7_000,
        lastError: 'HTTP 500',
        attempt: {
          id: newId('webhookAttempt'),
          attemptedAt: 2_000,
          statusCode: 500,
          latencyMs: 3,
          error: 'HTTP 500',
        },
      }),
      // A dispatcher whose lease was taken over: its attempt is history, its outcome is ignored.
      result(stale, { leaseUntil: stale.leaseUntil - 1 }),
    ]);

    const delivered = await repo.get(MERCHANT, ok.id);
    expect(delivered).toMatchObject({ state: 'DELIVERED', attemptCount: 1, lastError: null });
    expect(delivered.attempts).toEqual([
      { id: expect.stringMatching(/^atm_/), attemptedAt: 2_000, statusCode: 200, latencyMs: 12, error: null },
    ]);
    const pending = await repo.get(MERCHANT, retry.id);
    expect(pending).toMatchObject({
      state: 'PENDING',
      attemptCount: 1,
      nextAttemptAt: 7_000,
      lastError: 'HTTP 500',
    });
    expect(pending.attempts).toHaveLength(1);
    const fenced = await repo.get(MERCHANT, stale.id);
    expect(fenced).toMatchObject({ state: 'PENDING', attemptCount: 0 });
    expect(fenced.attempts).toHaveLength(1);

    // The lease went back with the result: the retry is claimable as soon as it is due.
    expect(await repo.claimDue(6_999, 30_000, 10)).toEqual([]);
    expect(await repo.firstDueAt(2_000)).toBe(7_000);
    expect((await repo.claimDue(7_000, 30_000, 10)).map((m) => m.id)).toEqual([retry.id]);
  });

  it('lists a merchant’s messages newest first, filtered and limited', async () => {
    const rows = [
      message({ created_at: 1, subject_id: 'crq_a' }),
      message({ created_at: 2, subject_id: 'crq_b', state: 'FAILED' }),
      message({ created_at: 3, subject_id: 'crq_a', state: 'DELIVERED' }),
      message({ created_at: 4, merchant_id: OTHER_MERCHANT }),
    ];
    await insertMessages(db.kysely, rows);
    const ids = (list: { id: string }[]) => list.map((m) => m.id);
    expect(ids(await repo.list(MERCHANT))).toEqual([rows[2]?.id, rows[1]?.id, rows[0]?.id]);
    expect(ids(await repo.list(MERCHANT, { limit: 2 }))).toEqual([rows[2]?.id, rows[1]?.id]);
    expect(ids(await repo.list(MERCHANT, { subjectId: 'crq_a' }))).toEqual([rows[2]?.id, rows[0]?.id]);
    expect(ids(await repo.list(MERCHANT, { state: 'FAILED' }))).toEqual([rows[1]?.id]);
    expect(ids(await repo.list(OTHER_MERCHANT))).toEqual([rows[3]?.id]);
    expect(ids(await repo.list(MERCHANT, { limit: 0 }))).toEqual([rows[2]?.id]);
    expect(await repo.list(MERCHANT, { limit: Number.NaN })).toHaveLength(3);
  });

  it('pages with startingAfter through equal creation times, in one total order', async () => {
    // Seven messages in three milliseconds: ties on created_at are ordered by id, both descending.
    const rows = [1, 1, 1, 2, 2, 3, 3].map((createdAt) => message({ created_at: createdAt }));
    await insertMessages(db.kysely, [...rows, message({ created_at: 2, merchant_id: OTHER_MERCHANT })]);
    const expected = [...rows]
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
      .map((row) => row.id);
    const seen: string[] = [];
    const pages: boolean[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await repo.listPage(MERCHANT, { limit: 2, startingAfter });
      seen.push(...page.data.map((m) => m.id));
      pages.push(page.hasMore);
      if (!page.hasMore) break;
      startingAfter = page.data.at(-1)?.id;
    }
    expect(seen).toEqual(expected);
    expect(pages).toEqual([true, true, true, false]);
    // A page that ends exactly at the last message says so.
    const lastTwo = await repo.listPage(MERCHANT, { limit: 2, startingAfter: expected[4] });
    expect(lastTwo).toMatchObject({ hasMore: false });
    expect(lastTwo.data.map((m) => m.id)).toEqual(expected.slice(5));
    expect(await repo.listPage(MERCHANT, { startingAfter: expected[6] })).toEqual({
      data: [],
      hasMore: false,
    });
    // `list` takes the same cursor.
    expect((await repo.list(MERCHANT, { startingAfter: expected[3] })).map((m) => m.id)).toEqual(
      expected.slice(4),
    );
  });

  it('combines the cursor with the filters, wherever the cursor message stands', async () => {
    const rows = [1, 2, 3, 4, 5].map((createdAt) =>
      message({ created_at: createdAt, state: createdAt % 2 ? 'FAILED' : 'DELIVERED' }),
    );
    await insertMessages(db.kysely, rows);
    const ids = (page: { data: { id: string }[] }) => page.data.map((m) => m.id);
    const failed = await repo.listPage(MERCHANT, { state: 'FAILED', limit: 1, startingAfter: rows[4]?.id });
    expect(ids(failed)).toEqual([rows[2]?.id]);
    expect(failed.hasMore).toBe(true);
    // The cursor is a position: a DELIVERED message still marks where FAILED ones resume.
    const afterDelivered = await repo.listPage(MERCHANT, { state: 'FAILED', startingAfter: rows[3]?.id });
    expect(afterDelivered).toMatchObject({ hasMore: false });
    expect(ids(afterDelivered)).toEqual([rows[2]?.id, rows[0]?.id]);
  });

  it('refuses a cursor that is not one of this merchant’s messages', async () => {
    const other = message({ merchant_id: OTHER_MERCHANT });
    await insertMessages(db.kysely, [message(), other]);
    for (const startingAfter of [other.id, 'msg_missing']) {
      const error = await repo.listPage(MERCHANT, { startingAfter }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).errorCode).toBe('WEBHOOK_MESSAGE_NOT_FOUND');
    }
  });

  it('answers another merchant’s message as not found', async () => {
    const row = message();
    await insertMessages(db.kysely, [row]);
    for (const call of [
      () => repo.get(OTHER_MERCHANT, row.id),
      () => repo.resend(OTHER_MERCHANT, row.id, 5),
    ]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).errorCode).toBe('WEBHOOK_MESSAGE_NOT_FOUND');
    }
  });

  it('resends a settled message with a fresh schedule and keeps its history', async () => {
    const row = message();
    await insertMessages(db.kysely, [row]);
    const [leased] = await repo.claimDue(1_000, 30_000, 1);
    if (!leased) throw new Error('expected a claimed message');
    await repo.recordResults([result(leased, { state: 'FAILED', attemptCount: 8, lastError: 'HTTP 503' })]);

    const resent = await repo.resend(MERCHANT, row.id, 9_000);
    expect(resent).toMatchObject({
      state: 'PENDING',
      attemptCount: 0,
      nextAttemptAt: 9_000,
      updatedAt: 9_000,
    });
    expect((await repo.get(MERCHANT, row.id)).attempts).toHaveLength(1);
    expect((await repo.claimDue(9_000, 30_000, 10)).map((m) => m.id)).toEqual([row.id]);

    const error = await repo.resend(MERCHANT, row.id, 9_500).catch((caught: unknown) => caught);
    expect((error as DomainError).errorCode).toBe('WEBHOOK_NOT_RESENDABLE');
  });

  // PostgreSQL only: SQLite has one writer per file, so there is no concurrent claim to race.
  if (engine === 'postgres')
    it('never gives one message to two concurrent claims (SKIP LOCKED)', async () => {
      const rows = Array.from({ length: 300 }, () => message());
      await insertMessages(db.kysely, rows);
      const claims = await Promise.all(Array.from({ length: 6 }, () => repo.claimDue(1_000, 30_000, 60)));
      const ids = claims.flat().map((m) => m.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(300);
    });
});
