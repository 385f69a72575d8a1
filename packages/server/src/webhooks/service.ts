import type { Kysely } from 'kysely';
import { type Actor, recordAudit } from '../audit/index.js';
import type { Database, Db } from '../db/index.js';
import {
  type Backlog,
  type ListFilter,
  type MessagePage,
  type MessageSummary,
  type MessageWithAttempts,
  type RecoveryBatch,
  WebhookRepo,
} from './repo.js';
import type { MessageState } from './state.js';

/** 24 h: how far back `backlog` counts messages given up on. */
const DAY_MS = 24 * 60 * 60 * 1000;
/** Merchants `backlog` names as the most behind. */
const MOST_BEHIND_SHOWN = 5;
/** Messages one `recover` call sends again: a batch that keeps each call's update to milliseconds. */
export const RECOVER_BATCH = 1_000;

export interface WebhooksOptions {
  db: Db;
  /** The process's dispatcher; a resent message is claimed at once here or, through NOTIFY, elsewhere. */
  dispatcher: { wake(): void };
  now?: () => number;
}

/** What the API layer and other domain areas ask of webhooks, scoped to one merchant where it matters. */
export class Webhooks {
  readonly #db: Db;
  readonly #repo: WebhookRepo;
  readonly #dispatcher: { wake(): void };
  readonly #now: () => number;

  constructor(options: WebhooksOptions) {
    this.#db = options.db;
    this.#repo = new WebhookRepo(options.db);
    this.#dispatcher = options.dispatcher;
    this.#now = options.now ?? Date.now;
  }

  /** The merchant's messages, newest first; filter by subject id (e.g. a credentials request) or state. */
  list(merchantId: string, filter: ListFilter = {}): Promise<MessageSummary[]> {
    return this.#repo.list(merchantId, filter);
  }

  /**
   * The same, one page with whether more follow; the next page starts after the last message's id.
   * @throws DomainError WEBHOOK_MESSAGE_NOT_FOUND when `startingAfter` is not one of this merchant's.
   */
  listPage(merchantId: string, filter: ListFilter = {}): Promise<MessagePage> {
    return this.#repo.listPage(merchantId, filter);
  }

  /** @throws DomainError WEBHOOK_MESSAGE_NOT_FOUND, also for another merchant's message. */
  get(merchantId: string, messageId: string): Promise<MessageWithAttempts> {
    return this.#repo.get(merchantId, messageId);
  }

  /** This merchant's messages of these ids with their attempts, in no particular order; others are left out. */
  getMany(merchantId: string, messageIds: readonly string[]): Promise<MessageWithAttempts[]> {
    return this.#repo.getMany(merchantId, messageIds);
  }

  /**
   * Sends a DELIVERED or FAILED message again, with a fresh retry schedule and the same webhook-id.
   * @throws DomainError WEBHOOK_MESSAGE_NOT_FOUND; WEBHOOK_NOT_RESENDABLE while the message is PENDING.
   */
  async resend(merchantId: string, messageId: string, by: Actor): Promise<MessageSummary> {
    const now = this.#now();
    const message = await this.#db.kysely.transaction().execute(async (trx) => {
      const resent = await this.#repo.resend(merchantId, messageId, now, trx);
      const details = { eventName: resent.eventName };
      await recordAudit(
        trx,
        { actor: by, action: 'webhook.resent', merchantId, subject: messageId, details },
        now,
      );
      return resent;
    });
    this.#dispatcher.wake();
    return message;
  }

  /**
   * Sends again the merchant's messages given up (FAILED) at or after `since`, after an outage longer
   * than the retry schedule: the oldest `RECOVER_BATCH` per call, each with the same webhook-id and a
   * fresh schedule. Call again while `hasMore` is true. Without a merchant, every merchant's: for an
   * operator after an outage of the service's own. A message carrying a card the shopper removed is
   * passed by, and counted in `notSent`.
   */
  async recover(merchantId: string | undefined, since: number, by: Actor): Promise<RecoveryBatch> {
    const now = this.#now();
    const outcome = await this.#db.kysely.transaction().execute(async (trx) => {
      const batch = await this.#repo.recoverFailed(merchantId, since, now, RECOVER_BATCH, trx);
      if (batch.recovered > 0) {
        const details = { since: new Date(since).toISOString(), recovered: batch.recovered };
        const event = { actor: by, action: 'webhooks.recovered', details } as const;
        await recordAudit(trx, merchantId === undefined ? event : { ...event, merchantId }, now);
      }
      return batch;
    });
    if (outcome.recovered > 0) this.#dispatcher.wake();
    return outcome;
  }

  /** The outbox now, for an operator: what is due and held, what was given up in the last 24 hours, who is behind. */
  backlog(): Promise<Backlog> {
    const now = this.#now();
    return this.#repo.backlog(now, now - DAY_MS, MOST_BEHIND_SHOWN);
  }

  /**
   * How long the outbox's first due message has waited, in ms (0 when none is due): held ones count, so a
   * receiver that hangs shows as its attempts' time-out.
   */
  async longestDueWaitMs(): Promise<number> {
    const now = this.#now();
    const first = await this.#repo.firstDueAt();
    return first === undefined || first > now ? 0 : now - first;
  }

  /**
   * Deletes up to `limit` messages settled before `before` (database time), with their attempts, in the
   * caller's transaction; says what each was about, for the caller to delete what hangs on them.
   */
  deleteSettled(
    executor: Kysely<Database>,
    before: number,
    limit: number,
  ): Promise<{ eventName: string; subjectId: string }[]> {
    return this.#repo.deleteSettled(executor, before, limit);
  }

  /** States of messages by id, for domain areas whose own state follows delivery; unknown ids are absent. */
  states(messageIds: readonly string[]): Promise<Map<string, MessageState>> {
    return this.#repo.states(messageIds);
  }
}
