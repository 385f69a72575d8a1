/**
 * A shopper's erasure, at their request: from the checkout ("Delete my wallet") or by an operator
 * (`wallet-checkout shopper erase`). Their sign-ins go first, being found by the email the wallet's
 * erasure empties; then the wallet (wallet/service.ts `eraseShopper`). A run cut short is finished by
 * running it again.
 */
import type { Actor } from './audit/index.js';
import type { Db } from './db/index.js';
import type { RateLimits } from './rate-limits.js';
import { forgetSignIns } from './shopper-auth/index.js';
import type { Shopper, Wallet } from './wallet/index.js';

export interface ShopperErasure {
  cardsRemoved: number;
  addressesEmptied: number;
  sessionsEnded: number;
  signInsDeleted: number;
}

export async function eraseShopper(
  deps: { db: Db; limits: Pick<RateLimits, 'forget' | 'forgetPrefix'>; wallet: Wallet },
  shopper: Shopper,
  by: Actor,
): Promise<ShopperErasure> {
  const signInsDeleted = await forgetSignIns(deps.db, deps.limits, shopper);
  const erased = await deps.wallet.eraseShopper(shopper.id, by);
  return { ...erased, signInsDeleted };
}
