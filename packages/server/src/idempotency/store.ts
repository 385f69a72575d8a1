import type { Kysely, Transaction } from 'kysely';
import type { Database, Db } from '../db/index.js';

/** Keys are kept for 24 hours (Stripe's window): long enough for any client retry loop. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export interface StoredResponse {
  merchantId: string;
  key: string;
  fingerprint: string;
  status: number;
  body: string;
}

type Executor = Kysely<Database> | Transaction<Database>;

/** The saved first answers of requests sent with an `Idempotency-Key`. */
export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async find(merchantId: string, key: string): Promise<StoredResponse | undefined> {
    const row = await this.db.kysely
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .where('key', '=', key)
      .where('expires_at', '>', this.now())
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      merchantId: row.merchant_id,
      key: row.key,
      fingerprint: row.fingerprint,
      status: row.response_status,
      body: row.response_body,
    };
  }

  /**
   * Saves answers inside the caller's transaction, so the answer and the side effect commit together.
   * An expired row with the same key is replaced. Returns the keys that another request saved first.
   */
  async save(executor: Executor, responses: StoredResponse[]): Promise<Set<string>> {
    if (responses.length === 0) return new Set();
    const now = this.now();
    const inserted = await executor
      .insertInto('idempotency_keys')
      .values(
        responses.map((response) => ({
          merchant_id: response.merchantId,
          key: response.key,
          fingerprint: response.fingerprint,
          response_status: response.status,
          response_body: response.body,
          created_at: now,
          expires_at: now + IDEMPOTENCY_TTL_MS,
        })),
      )
      .onConflict((conflict) =>
        conflict
          .columns(['merchant_id', 'key'])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            response_status: eb.ref('excluded.response_status'),
            response_body: eb.ref('excluded.response_body'),
            created_at: eb.ref('excluded.created_at'),
            expires_at: eb.ref('excluded.expires_at'),
          }))
          .where('idempotency_keys.expires_at', '<=', now),
      )
      .returning(['merchant_id', 'key'])
      .execute();
    const saved = new Set(inserted.map((row) => `${row.merchant_id}\n${row.key}`));
    return new Set(
      responses
        .filter((r) => !saved.has(`${r.merchantId}\n${r.key}`))
        .map((r) => `${r.merchantId}\n${r.key}`),
    );
  }

  /** Saves one answer in a transaction of its own; false when another request saved one under the key first. */
  async saveAlone(response: StoredResponse): Promise<boolean> {
    const taken = await this.db.kysely.transaction().execute((trx) => this.save(trx, [response]));
    return taken.size === 0;
  }

  /** Removes expired keys; run by the maintenance timer. */
  async sweep(): Promise<number> {
    const result = await this.db.kysely
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<=', this.now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
