/**
 * Rate limits of what tells anyone whether an email has a wallet, and so could be used to test lists of
 * emails: the shopper look-up, and the checkout's code requests and enrolments. Counted in the database
 * (`RateLimits`), so the limits hold across every process of the service.
 */
import { clientKey, type RateLimits } from '../../rate-limits.js';
import type { ShopperAuth } from '../../shopper-auth/index.js';

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

/** The per-client and per-merchant counters, shared by every process through the database. */
export class LookupLimiter {
  readonly #limits: LookupLimits;
  readonly #counters: RateLimits;

  constructor(counters: RateLimits, limits: LookupLimits = DEFAULT_LOOKUP_LIMITS) {
    this.#counters = counters;
    this.#limits = limits;
  }

  /** Throws RateLimitedError when the client address has used up its look-ups. */
  checkClient(ip: string): Promise<void> {
    const { perClient, windowMs } = this.#limits;
    return this.#counters.enforce(
      `lookup:client:${clientKey(ip)}`,
      perClient,
      windowMs,
      (wait) =>
        `Too many shopper look-ups from this address (at most ${perClient} in ${windowMs / 1000} s); retry in ${wait} s.`,
    );
  }

  /** Throws RateLimitedError when the merchant's origins have used up their look-ups. */
  checkMerchant(merchantId: string): Promise<void> {
    const { perMerchant, windowMs } = this.#limits;
    return this.#counters.enforce(
      `lookup:merchant:${merchantId}`,
      perMerchant,
      windowMs,
      (wait) =>
        `Too many shopper look-ups for merchant ${merchantId} (at most ${perMerchant} in ${windowMs / 1000} s); retry in ${wait} s.`,
    );
  }
}

/**
 * 30 code requests and enrolments a minute per client address: a shopper makes one or two per checkout,
 * and each answer ("sent" or "enrol") tells whether the email has a wallet, as a look-up does.
 */
export const SIGN_IN_LIMITS = { perClient: 30, windowMs: 60_000 };

/** What the sign-in routes' descriptions say of their limit. */
export const SIGN_IN_LIMIT_NOTE = `At most ${SIGN_IN_LIMITS.perClient} code requests and enrolments per client address (IPv6: per /64) in ${SIGN_IN_LIMITS.windowMs / 1000} s, since each answer tells whether the email has a wallet: then \`429 RATE_LIMITED\` with \`Retry-After\`.`;

/**
 * Counts a code request or enrolment for `email` against its client address; throws RateLimitedError
 * past SIGN_IN_LIMITS. Staging's test shopper is not counted: end-to-end tests sign it in many times a
 * minute from one address.
 */
export function limitSignIn(
  deps: { shopperAuth: ShopperAuth; rateLimits: RateLimits },
  ip: string,
  email: string,
): Promise<void> {
  if (deps.shopperAuth.isTestShopper(email)) return Promise.resolve();
  const { perClient, windowMs } = SIGN_IN_LIMITS;
  return deps.rateLimits.enforce(
    `sign-in:client:${clientKey(ip)}`,
    perClient,
    windowMs,
    (wait) =>
      `Too many code requests and enrolments from this address (at most ${perClient} in ${windowMs / 1000} s); retry in ${wait} s.`,
  );
}
