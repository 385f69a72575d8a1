import type { Db } from '../db/index.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { type CardVault, luhnCheckDigit } from '../vault/vault.js';
import type { Card, Wallet } from '../wallet/index.js';

/** The `serial`th of a run of valid Visa numbers that no sandbox test card shares. */
export function visaNumber(serial: number): string {
  const payload = `4929${String(serial).padStart(11, '0')}`;
  return payload + luhnCheckDigit(payload);
}

/** Stores `pan` in the vault in a transaction of its own, as saving a card does in the card's. */
export function storeInVault(db: Db, vault: CardVault, pan: string): Promise<string> {
  return db.kysely.transaction().execute((trx) => vault.store(trx, pan));
}

/**
 * Saves `pan` to the staging test shopper's wallet, billed to their first address and expiring in two
 * years, as a card beside the seeded ones.
 */
export async function addTestShopperCard(wallet: Wallet, pan: string, needsCvv = false): Promise<Card> {
  const shopper = await wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
  if (!shopper) throw new Error('no staging test shopper: a staging service seeds it at start');
  const [address] = await wallet.listAddresses(shopper.id);
  return wallet.addCard({
    shopperId: shopper.id,
    pan,
    expMonth: 12,
    expYear: new Date().getUTCFullYear() + 2,
    nameOnCard: 'Taylor Shopper',
    billingAddressId: address?.id as number,
    needsCvv,
  });
}
