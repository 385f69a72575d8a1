import type { Db } from '../db/index.js';
import { type CardVault, luhnCheckDigit } from '../vault/vault.js';

/** The `serial`th of a run of valid Visa numbers that no sandbox test card shares. */
export function visaNumber(serial: number): string {
  const payload = `4929${String(serial).padStart(11, '0')}`;
  return payload + luhnCheckDigit(payload);
}

/** Stores `pan` in the vault in a transaction of its own, as saving a card does in the card's. */
export function storeInVault(db: Db, vault: CardVault, pan: string): Promise<string> {
  return db.kysely.transaction().execute((trx) => vault.store(trx, pan));
}
