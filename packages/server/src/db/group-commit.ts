import type { Transaction } from 'kysely';
import type { Database, Db } from './index.js';
import { isDatabaseUnavailable } from './unavailable.js';

/**
 * Group commit: writes submitted while a commit is under way are gathered and committed together in the
 * next transaction, and each caller is answered only once its write is on disk. One fsync costs about
 * 0.2 ms, so one commit per request tops out near 5,000 a second; a batch pays it once for all.
 *
 * `write` receives the whole batch and returns, for each item, an error to reject it with (or undefined).
 * If the batch transaction itself fails, every item is retried alone so one bad item cannot sink the rest,
 * unless the database could not be used at all: then the whole batch gets that failure at once.
 */
export type BatchWriter<T> = (trx: Transaction<Database>, items: T[]) => Promise<(Error | undefined)[]>;

interface Pending<T> {
  item: T;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * 3 ms at least between the starts of two commits. A commit writes its pages to the WAL on the event loop
 * (about 0.3 ms for a batch), and on SQLite no other statement runs until the flush that follows is on
 * disk (0.1 to 2 ms under load). A batch gathers only what arrived during the previous one: at 2,000
 * requests a second that is one or two a commit, each paying both costs. Waiting gathers about six.
 * Under heavy load a commit cycle outlasts the interval, so nothing waits.
 */
const MIN_COMMIT_INTERVAL_MS = 3;

/**
 * A batch of this many starts without waiting out the interval: they came faster than one every 0.2 ms
 * (5,000 a second), so the batch is worth its commit already and waiting would only add latency. Under a
 * closed loop of 50 connections, deliveries deferred, this took the acknowledgements from about 14k to
 * 16k-21k a second (docs/benchmarks.md).
 */
const EAGER_BATCH = 16;

export class GroupCommit<T> {
  #queue: Pending<T>[] = [];
  #running = false;
  /** When the last commit started, in `performance.now()` ms. */
  #lastStart = Number.NEGATIVE_INFINITY;
  /** Ends the wait for the interval early; set while the next commit waits. */
  #startNow: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly write: BatchWriter<T>,
    private readonly maxBatch = 512,
  ) {}

  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        void this.#drain();
      } else if (this.#queue.length >= EAGER_BATCH) {
        this.#startNow?.();
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const wait = this.#lastStart + MIN_COMMIT_INTERVAL_MS - performance.now();
      if (wait > 0 && this.#queue.length < EAGER_BATCH) await this.#gather(wait);
      // Let every request already read from the sockets join.
      await new Promise((resolve) => setImmediate(resolve));
      this.#lastStart = performance.now();
      const batch = this.#queue.splice(0, this.maxBatch);
      try {
        const outcomes = await this.#commit(batch.map((pending) => pending.item));
        for (const [i, pending] of batch.entries()) settle(pending, outcomes[i]);
      } catch (error) {
        // Alone, each would wait out the same failure again: a locked SQLite file or an unanswering
        // PostgreSQL host, 5 s per try, would keep the batch's last caller waiting minutes for its 503.
        if (isDatabaseUnavailable(error)) {
          for (const pending of batch) pending.reject(error);
          continue;
        }
        for (const pending of batch) {
          try {
            const [outcome] = await this.#commit([pending.item]);
            settle(pending, outcome);
          } catch (error) {
            pending.reject(error);
          }
        }
      }
    }
    this.#running = false;
  }

  /** Resolves after `ms`, or as soon as the queue holds an eager batch. */
  #gather(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#startNow?.(), ms);
      this.#startNow = () => {
        clearTimeout(timer);
        this.#startNow = undefined;
        resolve();
      };
    });
  }

  #commit(items: T[]): Promise<(Error | undefined)[]> {
    return this.db.kysely.transaction().execute((trx) => this.write(trx, items));
  }
}

function settle<T>(pending: Pending<T>, outcome: Error | undefined): void {
  if (outcome) pending.reject(outcome);
  else pending.resolve();
}
