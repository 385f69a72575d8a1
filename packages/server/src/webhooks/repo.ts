/**
 * All SQL for `webhook_messages` and `webhook_attempts`, on SQLite and PostgreSQL alike.
 *
 * Ownership of a PENDING message is a lease: whoever set `lease_until` delivers it until then. The
 * value of `lease_until` a dispatcher set (or read, for its own fresh outbox rows) is its fencing
 * token: results are written only while the row still carries it, so a dispatcher that overran its
 * lease cannot overwrite the outcome of the one that took the message over.
 */
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import { batchInsert, batchStatement, chunks, type Database, type Db, rowStatement } from '../db/index.js';
import type { WebhookMessagesTable } from '../db/schema.js';
import { DomainError } from '../errors.js';
import { PAYMENT_CREDENTIALS } from '../payments/credentials.js';
import type { RetrySchedule } from './outbox.js';
import { type MessageState, transition } from './state.js';

/** A PENDING message a dispatcher holds the lease of. */
export interface LeasedMessage {
  id: string;
  merchantId: string;
  eventName: string;
  subjectId: string;
  schedule: RetrySchedule;
  attemptCount: number;
  /**
   * When the attempt fell due. With `attemptCount`, it tells whether the row moved on since it was
   * leased: an attempt recorded by another process, a resend or a recovery each change one of them.
   */
  nextAttemptAt: number;
  /** The lease this dispatcher holds: its fencing token when writing the result. */
  leaseUntil: number;
}

export interface AttemptRecord {
  id: string;
  attemptedAt: number;
  /** Null when no response arrived (refused connection, time-out, no URL…). */
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

/** The outcome of one attempt: the attempt row and what the message becomes. */
export interface AttemptResult {
  messageId: string;
  leaseUntil: number;
  attempt: AttemptRecord;
  /** The state the message was in when leased; the update applies only if it still is. */
  from: MessageState;
  state: MessageState;
  attemptCount: number;
  nextAttemptAt: number;
  lastError: string | null;
  at: number;
}

export interface MessageSummary {
  id: string;
  merchantId: string;
  eventName: string;
  subjectId: string;
  state: MessageState;
  attemptCount: number;
  /** When the next attempt is due; meaningful while PENDING. */
  nextAttemptAt: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface MessageWithAttempts extends MessageSummary {
  /** Oldest first. */
  attempts: AttemptRecord[];
}

export interface ListFilter {
  subjectId?: string;
  /** Messages of this event only, e.g. PAYMENT_CREDENTIALS for the credentials requests' list. */
  eventName?: string;
  state?: MessageState;
  /** Created at or after this time (ms since the epoch). */
  createdSince?: number;
  /** Created before this time (ms since the epoch). */
  createdBefore?: number;
  /** 1–100; 20 when absent. */
  limit?: number;
  /**
   * The id of one of this merchant's messages, usually the last of the previous page: only messages
   * after it in list order (older) are listed. Another merchant's id is WEBHOOK_MESSAGE_NOT_FOUND.
   */
  startingAfter?: string;
}

/** What waits in the outbox at one moment, for an operator (`wallet-checkout webhooks status`). */
export interface Backlog {
  /** PENDING messages: due now, or waiting for a later retry. */
  pending: number;
  /** Of those, due now. */
  due: number;
  /** Of the due ones, held by a process: queued in it, or being delivered. */
  held: number;
  /** When the longest-waiting due message fell due, in ms since the epoch; null when none is due. */
  oldestDueAt: number | null;
  /** Messages given up on (FAILED) since the time asked about. */
  failed: number;
  /** The merchants with the most messages due, most first. */
  mostBehind: { merchantId: string; due: number; oldestDueAt: number }[];
}

/** What one call of a recovery did. */
export interface RecoveryBatch {
  /** Messages sent again by this call. */
  recovered: number;
  /** Whether others are left to send again: call again. */
  hasMore: boolean;
  /** Messages given up since the time asked that are never sent again: the shopper removed their card. */
  notSent: number;
}

/** One page of a merchant's messages, newest first. */
export interface MessagePage {
  data: MessageSummary[];
  /** Whether messages matching the filter lie beyond this page (ask with the last one's id). */
  hasMore: boolean;
}

const LEASE_COLUMNS = [
  'id',
  'merchant_id',
  'event_name',
  'subject_id',
  'schedule',
  'attempt_count',
  'next_attempt_at',
  'lease_until',
] as const;

type LeaseRow = Pick<WebhookMessagesTable, (typeof LEASE_COLUMNS)[number]>;

export function toLeased(row: LeaseRow): LeasedMessage {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    eventName: row.event_name,
    subjectId: row.subject_id,
    schedule: row.schedule,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    leaseUntil: row.lease_until,
  };
}

function toSummary(row: WebhookMessagesTable): MessageSummary {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    eventName: row.event_name,
    subjectId: row.subject_id,
    state: row.state,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const insertAttempts = batchInsert('webhook_attempts', {
  id: true,
  message_id: true,
  attempted_at: true,
  status_code: true,
  latency_ms: true,
  error: true,
});

/**
 * The lease is given back (set to now) with the result: a retry is claimed by whichever dispatcher polls
 * first once next_attempt_at has come. Guarded by the lease (the fencing token, see the file comment)
 * and the state the message was leased in.
 *
 * PostgreSQL: one UPDATE … FROM (VALUES …) per chunk, one round trip. Every guard compares with a column
 * of v: a constant `state = 'PENDING'` would let a planner walk the (state, next_attempt_at) index over
 * every pending row instead of looking ids up.
 */
const updateMessages = batchStatement<AttemptResult>(
  8,
  (r) => [r.messageId, r.leaseUntil, r.from, r.state, r.attemptCount, r.nextAttemptAt, r.lastError, r.at],
  (executor, rows) => {
    const values = sql.join(
      rows.map(
        ([id, fence, from, state, attemptCount, nextAttemptAt, lastError, at]) =>
          sql`(${id}, cast(${fence} as bigint), ${from}, ${state}, cast(${attemptCount} as integer), cast(${nextAttemptAt} as bigint), ${lastError}, cast(${at} as bigint))`,
      ),
    );
    return sql`
      with v(id, fence, from_state, state, attempt_count, next_attempt_at, last_error, at) as (values ${values})
      update webhook_messages
      set state = v.state, attempt_count = v.attempt_count, next_attempt_at = v.next_attempt_at,
          lease_until = v.at, last_error = v.last_error, updated_at = v.at
      from v
      where webhook_messages.id = v.id
        and webhook_messages.lease_until = v.fence
        and webhook_messages.state = v.from_state
    `.compile(executor);
  },
);

/**
 * SQLite: the same update, one keyed statement per result in the same transaction. SQLite materializes
 * the VALUES and joins it (7 to 17 µs a row under load); looking each id up costs 3.5 µs, and there is
 * no round trip to save.
 */
const updateMessage = rowStatement<AttemptResult>(
  9,
  (r) => [
    r.state,
    r.attemptCount,
    r.nextAttemptAt,
    r.at,
    r.lastError,
    r.at,
    r.messageId,
    r.leaseUntil,
    r.from,
  ],
  (executor, [state, attemptCount, nextAttemptAt, leaseUntil, lastError, updatedAt, id, fence, from]) =>
    sql`
      update webhook_messages
      set state = ${state}, attempt_count = ${attemptCount}, next_attempt_at = ${nextAttemptAt},
          lease_until = ${leaseUntil}, last_error = ${lastError}, updated_at = ${updatedAt}
      where id = ${id} and lease_until = ${fence} and state = ${from}
    `.compile(executor),
);

/**
 * A PAYMENT_CREDENTIALS message whose card the shopper has removed, which is never sent again. Its number
 * stays in the vault only for the deliveries acknowledged before the removal (vault/erasure.ts waits for
 * those); a resend would carry it out once more and, repeated, put its erasure off for good.
 */
function carriesRemovedCard(eb: ExpressionBuilder<Database, 'webhook_messages'>) {
  return eb.and([
    eb('webhook_messages.event_name', '=', PAYMENT_CREDENTIALS),
    eb.exists(
      eb
        .selectFrom('credentials_requests')
        .innerJoin('cards', 'cards.id', 'credentials_requests.payment_id')
        .select('cards.id')
        .whereRef('credentials_requests.id', '=', 'webhook_messages.subject_id')
        .where('cards.removed_at', 'is not', null),
    ),
  ]);
}

export class WebhookRepo {
  constructor(private readonly db: Db) {}

  /**
   * Leases up to `limit` due messages (PENDING, due, lease run out), oldest due first. On PostgreSQL
   * `FOR UPDATE SKIP LOCKED` lets several processes claim at once without ever taking the same row;
   * SQLite runs the statement under its single write lock, which gives the same guarantee. Messages of
   * the merchants in `skip` are left out: the dispatcher already holds a share's worth of messages
   * waiting for their receivers.
   */
  async claimDue(
    now: number,
    leaseMs: number,
    limit: number,
    skip: readonly string[] = [],
  ): Promise<LeasedMessage[]> {
    if (limit <= 0) return [];
    const { kysely, engine } = this.db;
    const rows = await kysely
      .updateTable('webhook_messages')
      .set({ lease_until: now + leaseMs })
      .where('id', 'in', (qb) =>
        qb
          .selectFrom('webhook_messages')
          .select('id')
          .where('state', '=', 'PENDING')
          .where('next_attempt_at', '<=', now)
          .where('lease_until', '<=', now)
          .$if(skip.length > 0, (q) => q.where('merchant_id', 'not in', skip))
          .orderBy('next_attempt_at')
          .limit(limit)
          .$if(engine === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returning(LEASE_COLUMNS)
      .execute();
    return rows.map(toLeased);
  }

  /**
   * When the earliest PENDING message falls due, or the earliest after `after` (for a timer that beats
   * the poll): one step down the (state, next_attempt_at) index.
   */
  async firstDueAt(after?: number): Promise<number | undefined> {
    let query = this.db.kysely
      .selectFrom('webhook_messages')
      .select((eb) => eb.fn.min('next_attempt_at').as('due'))
      .where('state', '=', 'PENDING');
    if (after !== undefined) query = query.where('next_attempt_at', '>', after);
    const row = await query.executeTakeFirst();
    return row?.due ?? undefined;
  }

  /**
   * Gives leases back so any dispatcher's next poll may take the messages at once. No state guard is
   * needed (and `state = ?` would tempt SQLite's planner into the (state, next_attempt_at) index and a
   * walk over every PENDING row instead of the id lookups): only PENDING rows are ever claimed, so a
   * lease value on a settled row means nothing.
   */
  async release(messages: readonly LeasedMessage[], now: number): Promise<void> {
    if (messages.length === 0) return;
    // In chunks (see `chunks`): a stopping dispatcher may give back thousands, past SQLite's 32,766
    // bind parameters a statement.
    await this.db.kysely.transaction().execute(async (trx) => {
      for (const chunk of chunks(messages)) {
        await trx
          .updateTable('webhook_messages')
          .set({ lease_until: now })
          .where(
            'id',
            'in',
            chunk.map((message) => message.id),
          )
          .where('lease_until', 'in', [...new Set(chunk.map((message) => message.leaseUntil))])
          .execute();
      }
    });
  }

  /**
   * Writes a batch of attempt outcomes in one transaction: one multi-row insert of the attempts and one
   * UPDATE … FROM (VALUES …) of the messages, guarded by state and lease (see the file comment).
   */
  async recordResults(results: readonly AttemptResult[]): Promise<void> {
    if (results.length === 0) return;
    await this.db.kysely.transaction().execute(async (trx) => {
      await insertAttempts(
        trx,
        results.map(({ messageId, attempt }) => ({
          id: attempt.id,
          message_id: messageId,
          attempted_at: attempt.attemptedAt,
          status_code: attempt.statusCode,
          latency_ms: attempt.latencyMs,
          error: attempt.error,
        })),
      );
      await (this.db.engine === 'sqlite' ? updateMessage : updateMessages)(trx, results);
    });
  }

  /** A merchant's messages, newest first: `listPage` without `hasMore`. */
  async list(merchantId: string, filter: ListFilter = {}): Promise<MessageSummary[]> {
    return (await this.listPage(merchantId, filter)).data;
  }

  /**
   * A page of a merchant's messages, newest first. The order is total and never changes (created_at,
   * then id, both descending; neither is ever updated), so walking the pages with `startingAfter`
   * visits every message older than the first page's once, even while messages are added or resent.
   *
   * @throws DomainError WEBHOOK_MESSAGE_NOT_FOUND when `startingAfter` is not one of this merchant's.
   */
  async listPage(merchantId: string, filter: ListFilter = {}): Promise<MessagePage> {
    const requested = filter.limit !== undefined && Number.isFinite(filter.limit) ? filter.limit : 20;
    const limit = Math.min(Math.max(Math.trunc(requested), 1), 100);
    // Looked up without the filters: the cursor is a position in the order, and the message it names
    // may have changed state since the previous page.
    const after =
      filter.startingAfter === undefined ? undefined : await this.#find(merchantId, filter.startingAfter);
    const rows = await this.db.kysely
      .selectFrom('webhook_messages')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .$if(filter.subjectId !== undefined, (q) => q.where('subject_id', '=', filter.subjectId as string))
      .$if(filter.eventName !== undefined, (q) => q.where('event_name', '=', filter.eventName as string))
      .$if(filter.state !== undefined, (q) => q.where('state', '=', filter.state as MessageState))
      .$if(filter.createdSince !== undefined, (q) =>
        q.where('created_at', '>=', filter.createdSince as number),
      )
      .$if(filter.createdBefore !== undefined, (q) =>
        q.where('created_at', '<', filter.createdBefore as number),
      )
      .$if(after !== undefined, (q) => {
        const { created_at: createdAt, id } = after as WebhookMessagesTable;
        // (created_at, id) < (createdAt, id), written so that `created_at <= ?` bounds the range scan of
        // the (merchant_id, created_at) index on both engines; the id test only sorts out equal times.
        // No index of its own: with 100,000 messages of one merchant, 25 to a millisecond, a page from
        // the middle took what the first page takes (0.3 ms SQLite, 0.6 ms PostgreSQL).
        return q
          .where('created_at', '<=', createdAt)
          .where((eb) => eb.or([eb('created_at', '<', createdAt), eb('id', '<', id)]));
      })
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      // One more than the page: its presence is `hasMore`, without a count.
      .limit(limit + 1)
      .execute();
    return { data: rows.slice(0, limit).map(toSummary), hasMore: rows.length > limit };
  }

  /** One message of this merchant with every attempt; another merchant's id is not found. */
  async get(merchantId: string, messageId: string): Promise<MessageWithAttempts> {
    const [message] = await this.getMany(merchantId, [messageId]);
    if (!message) throw messageNotFound(messageId);
    return message;
  }

  /**
   * This merchant's messages of these ids (at most a page's), each with every attempt, in no particular
   * order; other merchants' and missing ones are left out.
   */
  async getMany(merchantId: string, messageIds: readonly string[]): Promise<MessageWithAttempts[]> {
    if (messageIds.length === 0) return [];
    // One statement, so a message and its attempts come from one snapshot: read apart, a result
    // committed in between showed an attempt that the message's state and count did not have yet.
    const rows = await this.db.kysely
      .selectFrom('webhook_messages as m')
      .leftJoin('webhook_attempts as a', 'a.message_id', 'm.id')
      .selectAll('m')
      .select(['a.id as attempt_id', 'a.attempted_at', 'a.status_code', 'a.latency_ms', 'a.error'])
      .where('m.id', 'in', [...messageIds])
      .where('m.merchant_id', '=', merchantId)
      .orderBy('a.attempted_at')
      .orderBy('a.id')
      .execute();
    const messages = new Map<string, MessageWithAttempts>();
    for (const row of rows) {
      const message = messages.get(row.id) ?? { ...toSummary(row), attempts: [] };
      messages.set(row.id, message);
      if (row.attempt_id !== null && row.attempted_at !== null && row.latency_ms !== null) {
        message.attempts.push({
          id: row.attempt_id,
          attemptedAt: row.attempted_at,
          statusCode: row.status_code,
          latencyMs: row.latency_ms,
          error: row.error,
        });
      }
    }
    return [...messages.values()];
  }

  /**
   * DELIVERED or FAILED → PENDING, due now, with the attempt count back to 0 so the whole schedule
   * applies again; earlier attempts stay in the history. The lease is left free for any dispatcher.
   * `q` may be the caller's transaction.
   * @throws DomainError WEBHOOK_NOT_RESENDABLE while PENDING, or for card data the shopper has removed.
   */
  async resend(
    merchantId: string,
    messageId: string,
    now: number,
    q: Kysely<Database> = this.db.kysely,
  ): Promise<MessageSummary> {
    // An optimistic update guarded by the state read: a concurrent resend or delivery makes it miss,
    // and the state is read again so the state machine judges the new one.
    const removed = await q
      .selectFrom('webhook_messages')
      .select('id')
      .where('id', '=', messageId)
      .where('merchant_id', '=', merchantId)
      .where(carriesRemovedCard)
      .executeTakeFirst();
    if (removed) {
      throw new DomainError(
        'WEBHOOK_NOT_RESENDABLE',
        'The shopper has removed the card this message carries: its card data is not sent again.',
      );
    }
    for (;;) {
      const current = await this.#find(merchantId, messageId, q);
      const state = transition(current.state, 'RESEND');
      const updated = await q
        .updateTable('webhook_messages')
        .set({ state, attempt_count: 0, next_attempt_at: now, lease_until: now, updated_at: now })
        .where('id', '=', messageId)
        .where('merchant_id', '=', merchantId)
        .where('state', '=', current.state)
        .returningAll()
        .executeTakeFirst();
      if (updated) return toSummary(updated);
    }
  }

  /**
   * Sends again, as `resend` does, the merchant's FAILED messages given up at or after `since` (every
   * merchant's when `merchantId` is undefined), oldest first, at most `limit`; `hasMore` says whether
   * others are left for another call. Those carrying a card the shopper removed are never sent again:
   * `notSent` counts them all. `kysely` may be the caller's transaction.
   */
  async recoverFailed(
    merchantId: string | undefined,
    since: number,
    now: number,
    limit: number,
    kysely: Kysely<Database> = this.db.kysely,
  ): Promise<RecoveryBatch> {
    const { engine } = this.db;
    const givenUp = () =>
      kysely
        .selectFrom('webhook_messages')
        .$if(merchantId !== undefined, (q) => q.where('merchant_id', '=', merchantId as string))
        .where('state', '=', 'FAILED')
        .where('updated_at', '>=', since);
    const failed = () =>
      givenUp()
        .select('id')
        .where((eb) => eb.not(carriesRemovedCard(eb)));
    const recovered = await kysely
      .updateTable('webhook_messages')
      .set({
        state: transition('FAILED', 'RESEND'),
        attempt_count: 0,
        next_attempt_at: now,
        lease_until: now,
        updated_at: now,
      })
      .where('id', 'in', () =>
        failed()
          .orderBy('updated_at')
          .orderBy('id')
          .limit(limit)
          .$if(engine === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      // A message resent or retried meanwhile is left as it is.
      .where('state', '=', 'FAILED')
      .returning('id')
      .execute();
    const left = await failed().limit(1).executeTakeFirst();
    const { notSent } = await givenUp()
      .select((eb) => eb.fn.countAll<number>().as('notSent'))
      .where(carriesRemovedCard)
      .executeTakeFirstOrThrow();
    return { recovered: recovered.length, hasMore: left !== undefined, notSent: Number(notSent) };
  }

  /**
   * The outbox at `now`, every merchant together: PENDING counts, the oldest due message, FAILED since
   * `failedSince`, and the `top` merchants with the most due. Each walks the (state, next_attempt_at)
   * index over the rows of one state.
   */
  async backlog(now: number, failedSince: number, top: number): Promise<Backlog> {
    const { kysely } = this.db;
    const [counts, failed, behind] = await Promise.all([
      kysely
        .selectFrom('webhook_messages')
        .select((eb) => [
          eb.fn.countAll<number>().as('pending'),
          eb.fn
            .sum<number | null>(
              eb.case().when('next_attempt_at', '<=', now).then(eb.lit(1)).else(eb.lit(0)).end(),
            )
            .as('due'),
          eb.fn
            .sum<number | null>(
              eb
                .case()
                .when(eb.and([eb('next_attempt_at', '<=', now), eb('lease_until', '>', now)]))
                .then(eb.lit(1))
                .else(eb.lit(0))
                .end(),
            )
            .as('held'),
          eb.fn.min('next_attempt_at').as('first_due_at'),
        ])
        .where('state', '=', 'PENDING')
        .executeTakeFirstOrThrow(),
      kysely
        .selectFrom('webhook_messages')
        .select((eb) => eb.fn.countAll<number>().as('failed'))
        .where('state', '=', 'FAILED')
        .where('updated_at', '>=', failedSince)
        .executeTakeFirstOrThrow(),
      kysely
        .selectFrom('webhook_messages')
        .select((eb) => [
          'merchant_id',
          eb.fn.countAll<number>().as('due'),
          eb.fn.min('next_attempt_at').as('oldest'),
        ])
        .where('state', '=', 'PENDING')
        .where('next_attempt_at', '<=', now)
        .groupBy('merchant_id')
        .orderBy('due', 'desc')
        .orderBy('merchant_id')
        .limit(top)
        .execute(),
    ]);
    const firstDueAt = counts.first_due_at === null ? null : Number(counts.first_due_at);
    return {
      pending: Number(counts.pending),
      due: Number(counts.due ?? 0),
      held: Number(counts.held ?? 0),
      oldestDueAt: firstDueAt !== null && firstDueAt <= now ? firstDueAt : null,
      failed: Number(failed.failed),
      mostBehind: behind.map((row) => ({
        merchantId: row.merchant_id,
        due: Number(row.due),
        oldestDueAt: Number(row.oldest),
      })),
    };
  }

  /**
   * Deletes up to `limit` messages settled (DELIVERED or FAILED) before `before`, oldest first, with their
   * attempts, and says what each was about, so that the caller can delete what hangs on them in the same
   * transaction (`executor`). A settled message's `next_attempt_at` is when it settled, so the walk is a
   * range of the (state, next_attempt_at) index. On PostgreSQL the rows are locked as they are chosen,
   * skipping locked ones: a resend meanwhile waits, and two processes sweeping at once take different rows.
   */
  async deleteSettled(
    executor: Kysely<Database>,
    before: number,
    limit: number,
  ): Promise<{ eventName: string; subjectId: string }[]> {
    const settled = await executor
      .selectFrom('webhook_messages')
      .select(['id', 'event_name', 'subject_id'])
      .where('state', 'in', ['DELIVERED', 'FAILED'])
      .where('next_attempt_at', '<', before)
      .orderBy('next_attempt_at')
      .limit(limit)
      .$if(this.db.engine === 'postgres', (q) => q.forUpdate().skipLocked())
      .execute();
    if (settled.length === 0) return [];
    const ids = settled.map((row) => row.id);
    await executor.deleteFrom('webhook_attempts').where('message_id', 'in', ids).execute();
    await executor.deleteFrom('webhook_messages').where('id', 'in', ids).execute();
    return settled.map((row) => ({ eventName: row.event_name, subjectId: row.subject_id }));
  }

  /** States of the given messages; ids that do not exist are absent from the map. */
  async states(messageIds: readonly string[]): Promise<Map<string, MessageState>> {
    if (messageIds.length === 0) return new Map();
    const rows = await this.db.kysely
      .selectFrom('webhook_messages')
      .select(['id', 'state'])
      .where('id', 'in', [...messageIds])
      .execute();
    return new Map(rows.map((row) => [row.id, row.state]));
  }

  async #find(
    merchantId: string,
    messageId: string,
    q: Kysely<Database> = this.db.kysely,
  ): Promise<WebhookMessagesTable> {
    const row = await q
      .selectFrom('webhook_messages')
      .selectAll()
      .where('id', '=', messageId)
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    if (!row) throw messageNotFound(messageId);
    return row;
  }
}

function messageNotFound(messageId: string): DomainError {
  return new DomainError('WEBHOOK_MESSAGE_NOT_FOUND', `No webhook message ${messageId} for this merchant.`);
}
