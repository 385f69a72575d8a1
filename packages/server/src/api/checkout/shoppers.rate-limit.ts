/**
 * Rate limits of the shopper look-up, which tells anyone on an allowed origin whether an email has a
 * wallet and so could be used to test lists of emails. Counted in this process's memory: with several
 * processes each counts on its own, so a client can get up to N times the limit across N processes.
 */
import { isIPv6 } from 'node:net';
import { DomainError } from '../../errors.js';

export interface LookupLimits {
  /** Look-ups one client address may make per window. */
  perClient: number;
  /** Look-ups one merchant's origins may make per window, all clients together. */
  perMerchant: number;
  windowMs: number;
}

/**
 * 30 a minute per client: one shopper makes one or two, and a shared address (an office, a mobile
 * carrier's NAT) still gets room. 600 a minute per merchant: 10 a second for the busiest shop, which
 * caps what an attacker spread over many addresses learns about one merchant's shoppers.
 */
export const DEFAULT_LOOKUP_LIMITS: LookupLimits = { perClient: 30, perMerchant: 600, windowMs: 60_000 };

export class RateLimitedError extends DomainError {
  constructor(
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super('RATE_LIMITED', message);
  }
}

/**
 * Counts hits per key in fixed windows. Windows that have ended are dropped once per window, so memory
 * holds at most the keys seen in the last two windows.
 */
export class FixedWindowCounter {
  readonly #windows = new Map<string, { count: number; endsAt: number }>();
  #sweepAt = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    readonly now: () => number = Date.now,
  ) {}

  /** Counts one hit for `key`: undefined while within the limit, else the whole seconds to wait. */
  hit(key: string): number | undefined {
    const now = this.now();
    if (now >= this.#sweepAt) {
      for (const [stale, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(stale);
      this.#sweepAt = now + this.windowMs;
    }
    let window = this.#windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.windowMs };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return window.count > this.limit ? Math.max(1, Math.ceil((window.endsAt - now) / 1000)) : undefined;
  }
}

/**
 * The key a client is counted under: its IPv4 address, or the /64 network of an IPv6 one, since a
 * single IPv6 host commonly holds a whole /64.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(ip)) return ip;
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

/** The per-client and per-merchant counters of one process. */
export class LookupLimiter {
  readonly #perClient: FixedWindowCounter;
  readonly #perMerchant: FixedWindowCounter;

  constructor(limits: LookupLimits = DEFAULT_LOOKUP_LIMITS, now: () => number = Date.now) {
    this.#perClient = new FixedWindowCounter(limits.perClient, limits.windowMs, now);
    this.#perMerchant = new FixedWindowCounter(limits.perMerchant, limits.windowMs, now);
  }

  /** Throws RateLimitedError when the client address has used up its look-ups. */
  checkClient(ip: string): void {
    const wait = this.#perClient.hit(clientKey(ip));
    if (wait !== undefined) {
      throw new RateLimitedError(
        wait,
        `Too many shopper look-ups from this address (at most ${this.#perClient.limit} in ${this.#perClient.windowMs / 1000} s); retry in ${wait} s.`,
      );
    }
  }

  /** Throws RateLimitedError when the merchant's origins have used up their look-ups. */
  checkMerchant(merchantId: string): void {
    const wait = this.#perMerchant.hit(merchantId);
    if (wait !== undefined) {
      throw new RateLimitedError(
        wait,
        `Too many shopper look-ups for merchant ${merchantId} (at most ${this.#perMerchant.limit} in ${this.#perMerchant.windowMs / 1000} s); retry in ${wait} s.`,
      );
    }
  }
}
