/**
 * How dispatchers in different processes wake each other on PostgreSQL: each listens on one channel on a
 * connection of its own, and a NOTIFY on it makes every listener claim due messages at once instead of at
 * its next poll. On SQLite there is one process per database, and both sides do nothing.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../db/index.js';
import type { Logger } from '../log.js';

/** PostgreSQL channel on which processes wake each other. */
export const NOTIFY_CHANNEL = 'wallet_webhooks';

/** 1 s: pause before listening again after the LISTEN connection broke. */
const RELISTEN_MS = 1_000;

export class WakeUps {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #onWake: () => void;
  #listening = false;
  #listener: pg.PoolClient | undefined;
  #relistenTimer: NodeJS.Timeout | undefined;
  /**
   * From the connection's loss or the first failed attempt until it listens again: an outage, whose
   * start alone is logged as a warning, and its end as one line with the attempts that failed.
   */
  #outage: { failedAttempts: number } | undefined;

  /** `onWake` runs on every notification from any process, this one included. */
  constructor(options: { db: Db; log: Logger; onWake: () => void }) {
    this.#db = options.db;
    this.#log = options.log;
    this.#onWake = options.onWake;
  }

  /**
   * Listens from now on; a connection that fails or breaks is tried again every second meanwhile. An
   * outage logs one warning when it starts and one line when listening resumes, not one a second.
   */
  async listen(): Promise<void> {
    this.#listening = true;
    await this.#connect();
  }

  /** Stops listening and gives the connection back. */
  async unlisten(): Promise<void> {
    this.#listening = false;
    clearTimeout(this.#relistenTimer);
    const client = this.#listener;
    if (client === undefined) return;
    try {
      await client.query(`UNLISTEN ${NOTIFY_CHANNEL}`);
      if (this.#listener === client) this.#drop(client);
    } catch (error) {
      if (this.#listener === client) this.#drop(client, error as Error);
    }
  }

  /** Wakes every listening process. A failure is only logged: their polls find the messages later. */
  async notify(): Promise<void> {
    if (this.#db.engine !== 'postgres') return;
    try {
      await sql`select pg_notify(${NOTIFY_CHANNEL}, '')`.execute(this.#db.kysely);
    } catch (error) {
      this.#log.warn({ err: error }, 'could not NOTIFY other processes; their polls will find the messages');
    }
  }

  async #connect(): Promise<void> {
    const pool = this.#db.pool;
    if (this.#db.engine !== 'postgres' || pool === undefined || !this.#listening) return;
    let client: pg.PoolClient | undefined;
    try {
      client = await pool.connect();
      client.on('notification', this.#onNotification);
      client.on('error', this.#onError);
      this.#listener = client;
      await client.query(`LISTEN ${NOTIFY_CHANNEL}`);
      if (this.#outage) {
        this.#log.info(this.#outage, 'listening for webhook wake-ups again');
        this.#outage = undefined;
      }
      if (!this.#listening) await this.unlisten();
    } catch (error) {
      if (!this.#outage) {
        this.#outage = { failedAttempts: 0 };
        this.#log.warn(
          { err: error },
          'could not LISTEN for webhook wake-ups; polling, and trying again every second, until it can',
        );
      }
      this.#outage.failedAttempts++;
      if (client !== undefined && this.#listener === client) this.#drop(client, error as Error);
      this.#reconnect();
    }
  }

  readonly #onNotification = (): void => this.#onWake();

  readonly #onError = (error: Error): void => {
    const client = this.#listener;
    if (client === undefined) return;
    this.#outage = { failedAttempts: 0 };
    this.#log.warn({ err: error }, 'webhook LISTEN connection lost; listening again');
    this.#drop(client, error);
    this.#reconnect();
  };

  #drop(client: pg.PoolClient, error?: Error): void {
    this.#listener = undefined;
    client.off('notification', this.#onNotification);
    client.off('error', this.#onError);
    client.release(error);
  }

  #reconnect(): void {
    if (!this.#listening) return;
    clearTimeout(this.#relistenTimer);
    this.#relistenTimer = setTimeout(() => void this.#connect(), RELISTEN_MS);
    this.#relistenTimer.unref();
  }
}
