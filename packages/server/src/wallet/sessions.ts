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

  create(input: { merchantId: string; shopperId: string; ttlSeconds: number; now?: Date }): Promise<Session> {
    const createdAt = (input.now ?? new Date()).getTime();
    return repo.insertSession(this.db.kysely, {
      id: newUuid(),
      merchant_id: input.merchantId,
      shopper_id: input.shopperId,
      created_at: createdAt,
      expires_at: createdAt + input.ttlSeconds * 1000,
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
