/**
 * E-mails that tell a shopper of something already done, such as a device that now remembers them.
 * Each is written in the transaction that did it, sent as soon as that commits without holding up the
 * shopper's answer, and, when the mail server fails, sent again on a schedule by whichever process
 * polls first. At least once: a process that dies after the server took the message, but before the
 * notice was deleted, leaves it to be sent again when its lease runs out.
 */
import type { Transaction } from 'kysely';
import type { Database, Db } from '../db/index.js';
import type { ShopperNoticeKind } from '../db/schema.js';
import { newId } from '../ids.js';
import type { Logger } from '../log.js';
import type { Message, MessageSender } from './messages.js';
import * as repo from './repo.js';

/**
 * 1 min, 5 min, 30 min, 2 h and 6 h between attempts: a mail server down for most of a working day
 * still delivers, well inside the days a remembered device lives.
 */
export const NOTICE_RETRY_DELAYS_MS = [60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000];
/** 5 min: longer than one SMTP send can last within its time-outs (10 s to connect, 20 s of silence). */
export const NOTICE_LEASE_MS = 5 * 60_000;
/** 30 s: the most a due retry, or a notice a stopped process left, waits for a poll. */
const POLL_INTERVAL_MS = 30_000;
/**
 * 5 s: the most `stop()` waits for a send under way, so that a hanging mail server cannot hold up a
 * shutdown; the notice is sent again when its lease runs out.
 */
const STOP_GRACE_MS = 5_000;
/** Notices leased at a time: a burst of sign-ins is sent in a few round trips to the database. */
const BATCH = 20;

export type NoticeRow = repo.NoticeRow;

/** A notice to write: what the message will be composed from, not the message itself. */
export interface NewNotice {
  shopperId: string;
  email: string;
  kind: ShopperNoticeKind;
  details: Record<string, unknown>;
}

/** Writes `notice` in `trx`, the transaction of what it tells of; `wake()` it once that commits. */
export async function enqueueNotice(
  trx: Transaction<Database>,
  notice: NewNotice,
  now: number,
): Promise<void> {
  await repo.insertNotice(trx, {
    id: newId('shopperNotice'),
    shopper_id: notice.shopperId,
    email: notice.email,
    kind: notice.kind,
    details: JSON.stringify(notice.details),
    created_at: now,
    attempts: 0,
    next_attempt_at: now,
    last_error: null,
  });
}

/** An error's text without e-mail addresses: a mail server's refusal often names the recipient. */
function withoutAddresses(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/[^\s<>"'@]+@[^\s<>"'@]+/g, '<address>').slice(0, 500);
}

export class ShopperNotices {
  readonly #db: Db;
  readonly #sender: MessageSender;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #compose: (notice: NoticeRow) => Promise<Message | undefined>;
  #draining: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    db: Db;
    sender: MessageSender;
    log: Logger;
    now: () => number;
    /**
     * The e-mail a notice stands for, composed when it is sent; undefined drops the notice unsent (its
     * shopper was erased, or changed address, since it was written).
     */
    compose: (notice: NoticeRow) => Promise<Message | undefined>;
  }) {
    this.#db = options.db;
    this.#sender = options.sender;
    this.#log = options.log;
    this.#now = options.now;
    this.#compose = options.compose;
  }

  /** Polls for due retries and for notices other processes left; `stop()` ends it. */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.wake();
    this.#timer = setInterval(() => this.wake(), POLL_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Sends what is due now, without waiting for it; a call during a send makes it look again after. */
  wake(): void {
    if (this.#stopped) return;
    this.#again = true;
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = undefined;
    });
  }

  /** Resolves once nothing woken is still being sent. */
  async settled(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /**
   * No more sends start; waits up to STOP_GRACE_MS for the one under way. A notice whose send is cut short
   * or fails is left to its lease: this or another process sends it again. The rest of its batch is given
   * back, due at once.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      this.settled(),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, STOP_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
  }

  async #drain(): Promise<void> {
    while (this.#again && !this.#stopped) {
      this.#again = false;
      try {
        let due: NoticeRow[];
        do {
          const now = this.#now();
          const leaseUntil = now + NOTICE_LEASE_MS;
          due = await repo.claimDueNotices(this.#db, { now, leaseUntil, limit: BATCH });
          for (const [index, notice] of due.entries()) {
            if (this.#stopped) {
              const ids = due.slice(index).map((left) => left.id);
              await repo.releaseNotices(this.#db.kysely, { ids, leaseUntil, now: this.#now() });
              break;
            }
            await this.#send(notice, leaseUntil);
          }
        } while (due.length === BATCH && !this.#stopped);
      } catch (error) {
        this.#log.warn({ err: error }, 'sending e-mails to shoppers failed; the next poll tries again');
      }
    }
  }

  async #send(notice: NoticeRow, leaseUntil: number): Promise<void> {
    const about = {
      id: notice.id,
      kind: notice.kind,
      shopperId: notice.shopper_id,
      attempts: notice.attempts,
    };
    try {
      const message = await this.#compose(notice);
      if (message) await this.#sender.send(message);
      else
        this.#log.info(
          { notice: about },
          'an e-mail to a shopper was dropped: the address is no longer theirs',
        );
    } catch (error) {
      const lastError = withoutAddresses(error);
      const delay = NOTICE_RETRY_DELAYS_MS[notice.attempts - 1];
      if (delay === undefined) {
        await repo.deleteNotice(this.#db.kysely, notice.id);
        this.#log.error(
          { notice: about, error: lastError },
          'gave up on an e-mail to a shopper after its last attempt',
        );
        return;
      }
      const nextAttemptAt = this.#now() + delay;
      await repo.rescheduleNotice(this.#db.kysely, {
        id: notice.id,
        leaseUntil,
        nextAttemptAt,
        lastError,
      });
      this.#log.warn(
        { notice: { ...about, nextAttemptAt: new Date(nextAttemptAt).toISOString() }, error: lastError },
        'an e-mail to a shopper could not be sent; it is tried again',
      );
      return;
    }
    await repo.deleteNotice(this.#db.kysely, notice.id);
  }
}
