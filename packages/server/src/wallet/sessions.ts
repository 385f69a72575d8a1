import type { Db } from '../db/index.js';
import { newUuid } from '../ids.js';
import * as repo from './repo.js';
import type { Session } from './types.js';

/** Payment-carousel sessions: a shopper's wallet opened for one merchant, for a limited time. */
export class Sessions {
  readonly #reads: repo.KeyReads;

  constructor(private readonly db: Db) {
    this.#reads = repo.keyReads(db);
  }

  /**
   * `selection`: what the shopper chose in the hosted checkout, which the session then allows alone;
   * without it, any card of the wallet (the merchant's own carousel).
   */
  create(input: {
    merchantId: string;
    shopperId: string;
    ttlSeconds: number;
    now?: Date;
    selection?: { paymentId: string; amountLimit: number };
  }): Promise<Session> {
    const createdAt = (input.now ?? new Date()).getTime();
    return repo.insertSession(this.db.kysely, {
      id: newUuid(),
      merchant_id: input.merchantId,
      shopper_id: input.shopperId,
      created_at: createdAt,
      expires_at: createdAt + input.ttlSeconds * 1000,
      payment_id: input.selection?.paymentId ?? null,
      amount_limit: input.selection?.amountLimit ?? null,
    });
  }

  find(id: string): Promise<Session | undefined> {
    return this.#reads.session(id);
  }

  /** Live up to, not including, `expiresAt`. */
  isLive(session: Session, now: Date): boolean {
    return now.getTime() < session.expiresAt;
  }
}
