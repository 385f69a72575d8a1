import type { Kysely } from 'kysely';
import type { Database, Db } from './db/index.js';
import { PAYMENT_CREDENTIALS } from './payments/credentials.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Messages deleted a transaction: each batch is one short write (a few milliseconds on SQLite, where it
 * holds the event loop), and requests are answered between batches.
 */
const DEFAULT_BATCH = 500;

export interface RetentionOptions {
  db: Db;
  /** Days a webhook message is kept after it settled (delivered or given up). */
  days: number;
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

/**
 * Deletes what the service no longer needs, `days` after a webhook message settled: the message and its
 * attempts, and for `PAYMENT_CREDENTIALS` the credentials request it delivered and the external responses
 * reported for it (their raw processor responses may carry card data, encrypted, and are kept no longer
 * than that). Each batch is one transaction, so a request never outlives its message half-deleted.
 * Messages still PENDING, orders, wallets and merchants are kept.
 */
export class Retention {
  readonly #options: RetentionOptions;
  #sweeping: Promise<{ messages: number; credentialsRequests: number }> | undefined;
  #stopped = false;

  constructor(options: RetentionOptions) {
    this.#options = options;
  }

  /**
   * One sweep through everything due for deletion, in batches; a sweep called while one runs joins it.
   * Says how many messages and credentials requests it deleted.
   */
  sweep(): Promise<{ messages: number; credentialsRequests: number }> {
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

  async #sweep(): Promise<{ messages: number; credentialsRequests: number }> {
    const { db, webhooks, payments, days, now, batch = DEFAULT_BATCH } = this.#options;
    const before = now() - days * DAY_MS;
    const deleted = { messages: 0, credentialsRequests: 0 };
    while (!this.#stopped) {
      const { messages, requests } = await db.kysely.transaction().execute(async (trx) => {
        const settled = await webhooks.deleteSettled(trx, before, batch);
        const credentials = settled
          .filter((message) => message.eventName === PAYMENT_CREDENTIALS)
          .map((message) => message.subjectId);
        await payments.deleteRequests(trx, credentials);
        return { messages: settled.length, requests: credentials.length };
      });
      deleted.messages += messages;
      deleted.credentialsRequests += requests;
      if (messages < batch) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return deleted;
  }
}
