import { sql } from 'kysely';
import type { Db } from './index.js';

/** 60 s between readings: clocks kept by NTP drift by milliseconds a day, not a minute. */
const SYNC_INTERVAL_MS = 60_000;

/**
 * The database server's time, read through this process's clock: what webhook leases and due times are
 * written and compared in. Processes on several machines share one PostgreSQL server, and a machine
 * whose clock runs ahead would otherwise see every other process's leases as run out and deliver their
 * messages a second time (a clock behind would hold its own past their end). The offset to the server's
 * `clock_timestamp()` is measured at start and every minute, halfway through the round trip. SQLite
 * lives on this machine: its time is this machine's, offset 0.
 */
export class DbClock {
  readonly #db: Db;
  readonly #localNow: () => number;
  #offsetMs = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Db, localNow: () => number = Date.now) {
    this.#db = db;
    this.#localNow = localNow;
  }

  /** The database's time now, in ms since the epoch. */
  readonly now = (): number => this.#localNow() + this.#offsetMs;

  /** How far the database's clock is ahead of this process's (negative when behind), in ms. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Measures the offset, then again every minute until `stop()`; a failed reading keeps the last one. */
  async start(onError: (error: unknown) => void): Promise<void> {
    await this.#measure();
    this.#timer = setInterval(() => this.#measure().catch(onError), SYNC_INTERVAL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #measure(): Promise<void> {
    if (this.#db.engine !== 'postgres') return;
    const before = this.#localNow();
    const { rows } = await sql<{ ms: string | number }>`
      select extract(epoch from clock_timestamp()) * 1000 as ms`.execute(this.#db.kysely);
    const after = this.#localNow();
    this.#offsetMs = Math.round(Number(rows[0]?.ms) - (before + after) / 2);
  }
}
