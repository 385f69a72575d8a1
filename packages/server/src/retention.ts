import type { Kysely } from 'kysely';
import type { Database, Db } from './db/index.js';
import { deleteAbandonedOrders } from './orders/index.js';
import { PAYMENT_CREDENTIALS } from './payments/credentials.js';
import { eraseDueCards } from './vault/erasure.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Messages deleted a transaction: each batch is one short write (a few milliseconds on SQLite, where it
 * holds the event loop), and requests are answered between batches.
 */
const DEFAULT_BATCH = 500;

export interface RetentionOptions {
  db: Db;
  /**
   * Days a webhook message is kept after it settled (delivered or given up); undefined keeps messages and
   * orders for good (`RETENTION_DAYS=off`), card numbers no wallet holds being erased all the same.
   */
  days: number | undefined;
  webhooks: {
    deleteSettled(
      executor: Kysely<Database>,
      before: number,
      limit: number,
    ): Promise<{ eventName: string; subjectId: string }[]>;
  };
  payments: { deleteRequests(executor: Kysely<Database>, ids: readonly string[]): Promise<void> };
  /** The database's time (DbClock), in which messages record when they settled. */
  now: () => number;
  batch?: number;
}

export interface Swept {
  messages: number;
  credentialsRequests: number;
  orders: number;
  /** Card numbers erased from the vault, no wallet holding them any more. */
  erasedCards: number;
}

/**
 * Deletes what the service no longer needs, `days` after a webhook message settled: the message and its
 * attempts, and for `PAYMENT_CREDENTIALS` the credentials request it delivered and the external responses
 * reported for it (their raw processor responses may carry card data, encrypted, and are kept no longer
 * than that); and `days` after an abandoned checkout's order would have expired, the order (the shopper's
 * email and what was in the cart, for a sale that never happened). Each batch is one transaction, so a
 * request never outlives its message half-deleted. Messages still PENDING, orders paid or under way,
 * wallets and merchants are kept.
 *
 * Whatever `days` says, it also erases a card number from the vault an hour after a wallet removed the
 * card, unless another wallet still holds it or a webhook on its way needs it (vault/erasure.ts): the
 * shopper asked for it to go.
 */
export class Retention {
  readonly #options: RetentionOptions;
  #sweeping: Promise<Swept> | undefined;
  #stopped = false;

  constructor(options: RetentionOptions) {
    this.#options = options;
  }

  /**
   * One sweep through everything due for deletion, in batches; a sweep called while one runs joins it.
   * Says how many messages, credentials requests and orders it deleted.
   */
  sweep(): Promise<Swept> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  /** Ends a running sweep after its current batch, and sweeps no more. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#sweeping?.catch(() => undefined);
  }

  async #sweep(): Promise<Swept> {
    const { db, webhooks, payments, days, now } = this.#options;
    const deleted: Swept = { messages: 0, credentialsRequests: 0, orders: 0, erasedCards: 0 };
    if (days !== undefined) {
      const before = now() - days * DAY_MS;
      await this.#inBatches(async (trx, limit) => {
        const settled = await webhooks.deleteSettled(trx, before, limit);
        const credentials = settled
          .filter((message) => message.eventName === PAYMENT_CREDENTIALS)
          .map((message) => message.subjectId);
        await payments.deleteRequests(trx, credentials);
        deleted.messages += settled.length;
        deleted.credentialsRequests += credentials.length;
        return settled.length;
      });
      await this.#inBatches(async (trx, limit) => {
        const count = await deleteAbandonedOrders(trx, db.engine, before, limit);
        deleted.orders += count;
        return count;
      });
    }
    await this.#inBatches(async (trx, limit) => {
      const { considered, erased } = await eraseDueCards(trx, db.engine, now(), limit);
      deleted.erasedCards += erased;
      return considered;
    });
    return deleted;
  }

  /**
   * Runs `batch` in a transaction of its own until it deletes fewer than a full batch or the sweep is
   * stopped, letting other work run between transactions.
   */
  async #inBatches(batch: (trx: Kysely<Database>, limit: number) => Promise<number>): Promise<void> {
    const { db, batch: limit = DEFAULT_BATCH } = this.#options;
    while (!this.#stopped) {
      const count = await db.kysely.transaction().execute((trx) => batch(trx, limit));
      if (count < limit) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
