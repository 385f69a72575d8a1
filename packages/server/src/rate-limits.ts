import { isIPv4, isIPv6 } from 'node:net';
import { sql } from 'kysely';
import type { Db } from './db/index.js';
import { DomainError } from './errors.js';

/** A limit of RateLimits was reached: `retryAfterSeconds` until the window ends, for `Retry-After`. */
export class RateLimitedError extends DomainError {
  constructor(
    override readonly retryAfterSeconds: number,
    message: string,
  ) {
    super('RATE_LIMITED', message);
  }
}

/**
 * The key of every client address that cannot be read as one: behind a trusted proxy the address comes
 * from X-Forwarded-For, and a value spelt anew each time must not get a fresh count each time.
 */
export const UNREADABLE_CLIENT = 'unreadable';

/** `203.0.113.7:1234` and `[2001:db8::1]:1234`, as some proxies write X-Forwarded-For, without the port. */
function withoutPort(ip: string): string {
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(ip);
  if (v4?.[1]) return v4[1];
  return /^\[([^\]]+)\](?::\d+)?$/.exec(ip)?.[1] ?? ip;
}

/**
 * The key a client is counted under: its IPv4 address, or the /64 network of an IPv6 one, since a
 * single IPv6 host commonly holds a whole /64; a port is dropped, and whatever is no address shares
 * one key.
 */
export function clientKey(client: string): string {
  const ip = withoutPort(client.trim());
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const v4 = mapped?.[1] ?? ip;
  if (isIPv4(v4)) return v4;
  if (!isIPv6(ip)) return UNREADABLE_CLIENT;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Fixed-window counters kept in the database, so that every process of the service counts together: N
 * processes behind a load balancer allow what one would, and a restart forgets nothing.
 */
export class RateLimits {
  readonly #db: Db;
  readonly #now: () => number;

  /** `now`: the database's time (DbClock), so processes on several machines agree on the windows. */
  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /**
   * Counts one hit for `key` in a window of `windowMs` that starts with its first hit: undefined while the
   * window holds at most `limit` hits, else the whole seconds until it ends. One statement: concurrent hits
   * from several processes are each counted.
   */
  async hit(key: string, limit: number, windowMs: number): Promise<number | undefined> {
    const now = this.#now();
    const { count, ends_at: endsAt } = await this.#db.kysely
      .insertInto('rate_limit_windows')
      .values({ key, count: 1, ends_at: now + windowMs })
      .onConflict((conflict) =>
        conflict.column('key').doUpdateSet({
          // Both read the row as it was: an ended window starts again with this hit.
          count: sql`case when rate_limit_windows.ends_at <= ${now} then 1 else rate_limit_windows.count + 1 end`,
          ends_at: sql`case when rate_limit_windows.ends_at <= ${now} then excluded.ends_at else rate_limit_windows.ends_at end`,
        }),
      )
      .returning(['count', 'ends_at'])
      .executeTakeFirstOrThrow();
    return count > limit ? Math.max(1, Math.ceil((endsAt - now) / 1000)) : undefined;
  }

  /** Counts one hit on `key`; past `limit` in the window, throws RateLimitedError saying `why(wait)`. */
  async enforce(
    key: string,
    limit: number,
    windowMs: number,
    why: (waitSeconds: number) => string,
  ): Promise<void> {
    const wait = await this.hit(key, limit, windowMs);
    if (wait !== undefined) throw new RateLimitedError(wait, why(wait));
  }

  /** The hits of `key` in its window: 0 once the window ended, or before any. */
  async count(key: string): Promise<number> {
    const row = await this.#db.kysely
      .selectFrom('rate_limit_windows')
      .select('count')
      .where('key', '=', key)
      .where('ends_at', '>', this.#now())
      .executeTakeFirst();
    return row?.count ?? 0;
  }

  /** Takes back one hit of `key` counted for something that then did not happen. */
  async giveBack(key: string): Promise<void> {
    await this.#db.kysely
      .updateTable('rate_limit_windows')
      .set((eb) => ({ count: eb('count', '-', 1) }))
      .where('key', '=', key)
      .where('count', '>', 0)
      .execute();
  }

  /** Drops the window of `key` before it ends: for a shopper erased, whose email the key names. */
  async forget(key: string): Promise<void> {
    await this.#db.kysely.deleteFrom('rate_limit_windows').where('key', '=', key).execute();
  }

  /** Drops the windows of every key that starts with `prefix`, as `forget` does one. */
  async forgetPrefix(prefix: string): Promise<void> {
    // substr counts code points on both engines; LIKE would need its wildcards escaped.
    await this.#db.kysely
      .deleteFrom('rate_limit_windows')
      .where(sql`substr(${sql.ref('key')}, 1, ${[...prefix].length})`, '=', prefix)
      .execute();
  }

  /** Drops the windows that have ended. */
  async sweep(): Promise<void> {
    await this.#db.kysely.deleteFrom('rate_limit_windows').where('ends_at', '<=', this.#now()).execute();
  }
}
