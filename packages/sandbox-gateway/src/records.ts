/**
 * The gateway's only state, in memory and lost on restart: answers kept for idempotent replay, and the
 * cryptograms already spent. Both forget after a day or beyond a fixed count, oldest first.
 */

/** 24 h: how long a real gateway (Stripe, Adyen) keeps an idempotency key. */
const KEEP_MS = 24 * 60 * 60_000;
/** 100,000 answers of about 1 KB: some 100 MB at most, for a sandbox left running under load tests. */
const MAX_ENTRIES = 100_000;

/** A Map that drops entries older than KEEP_MS, and the oldest beyond MAX_ENTRIES. */
class ExpiringMap<V> {
  readonly #entries = new Map<string, { value: V; storedAt: number }>();

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now - entry.storedAt < KEEP_MS) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, storedAt: now });
    // Insertion order is age order, so the first keys are the oldest.
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= MAX_ENTRIES && now - entry.storedAt < KEEP_MS) break;
      this.#entries.delete(oldest);
    }
  }
}

export interface StoredAnswer {
  /** Hash of the request as read (style included), to tell a retry from a different request. */
  fingerprint: string;
  /** The style's media type: the answer is only given again in the style it was made in. */
  contentType: string;
  statusCode: number;
  body: string;
}

export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'conflict' };

/** Answers by merchant account and `Idempotency-Key`. */
export class IdempotencyRecords {
  readonly #answers = new ExpiringMap<StoredAnswer>();

  lookup(account: string, key: string, fingerprint: string, now: number): IdempotencyLookup {
    const answer = this.#answers.get(`${account}\n${key}`, now);
    if (!answer) return { kind: 'new' };
    return answer.fingerprint === fingerprint ? { kind: 'replay', answer } : { kind: 'conflict' };
  }

  /** The answer given to `key`, whatever request it was for; undefined if none in the last 24 hours. */
  find(account: string, key: string, now: number): StoredAnswer | undefined {
    return this.#answers.get(`${account}\n${key}`, now);
  }

  store(account: string, key: string, answer: StoredAnswer, now: number): void {
    this.#answers.set(`${account}\n${key}`, answer, now);
  }
}

/**
 * Spent cryptograms, across all merchant accounts: a cryptogram is the network's proof of one
 * transaction, so seeing it twice anywhere is a replay.
 */
export class CryptogramLedger {
  readonly #spent = new ExpiringMap<true>();

  /** True the first time a token and cryptogram pair is seen, false ever after. */
  spend(token: string, cryptogram: string, now: number): boolean {
    const key = `${token}\n${cryptogram}`;
    if (this.#spent.get(key, now)) return false;
    this.#spent.set(key, true, now);
    return true;
  }
}
