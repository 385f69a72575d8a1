import cardValidator from 'card-validator';
import { sql, type Transaction } from 'kysely';
import { type Database, type Db, prepared } from '../db/index.js';
import { ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import { Secret } from '../secret.js';
import type { KeyRing } from './keyring.js';

/** The Luhn check digit that completes `payload` (every digit of a card number but the last). */
export function luhnCheckDigit(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    // From the right, every other digit is doubled, starting with the one next to the check digit.
    let digit = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}

export function passesLuhn(digits: string): boolean {
  return digits.length > 1 && luhnCheckDigit(digits.slice(0, -1)) === digits.slice(-1);
}

/** card-validator's network names, where ours differ: ours are the webhook's `networkType` values. */
const NETWORK_NAMES: Record<string, string> = {
  'american-express': 'amex',
  'master-card': 'mastercard',
};

/** The card's network under our name (`visa`, `mastercard`, `amex`, `elo`…); undefined when unknown. */
export function cardNetwork(pan: string): string | undefined {
  const type = cardValidator.number(pan).card?.type;
  return type === undefined ? undefined : (NETWORK_NAMES[type] ?? type);
}

/** Messages name the field and the rule, never the number. */
export function validatePan(pan: string): void {
  // 12-19 digits: the ISO/IEC 7812 range of primary account numbers.
  if (!/^\d{12,19}$/.test(pan)) throw new ValidationError('pan: must be 12 to 19 digits');
  if (!passesLuhn(pan)) throw new ValidationError('pan: is not a valid card number (Luhn check failed)');
}

/** Thrown when a card number is asked of the vault after it was erased. */
export class ErasedCardError extends Error {
  constructor() {
    super('the card number was erased: the shopper removed the card from every wallet that held it');
  }
}

/**
 * Card numbers at rest: encrypted under the key ring with the vault id as associated data (so a
 * ciphertext copied onto another row does not decrypt), plus a keyed hash for de-duplication.
 * Only the vault turns a vault id back into a card number.
 */
export class CardVault {
  readonly #entry: (vaultId: string) => Promise<{ pan_ciphertext: string; erased_at: number | null }[]>;

  constructor(
    private readonly db: Db,
    private readonly keyRing: KeyRing,
  ) {
    // Every PAN credential reads one: compiled once (see `prepared`).
    this.#entry = prepared(
      db,
      (vaultId: string) =>
        db.kysely.selectFrom('vault_cards').select(['pan_ciphertext', 'erased_at']).where('id', '=', vaultId),
      [''],
    );
  }

  /**
   * Stores a card number and returns its vault id, in the transaction that writes the card holding it: a
   * number already in the vault keeps its id. On PostgreSQL the entry stays locked until that transaction
   * ends, so the erasure (vault/erasure.ts) cannot empty it under a card being saved; an entry erased
   * meanwhile no longer matches, and the number is stored anew.
   */
  async store(trx: Transaction<Database>, pan: string): Promise<string> {
    validatePan(pan);
    const hashes = this.keyRing.hmacs(pan);
    if (this.db.engine === 'postgres') {
      // Serialises stores of the same number across processes, so two of them cannot both insert it.
      // Every key's hash, in one order: processes whose rings list the keys in another order (during a
      // rotation's restarts) still take a common lock, and never in opposite orders.
      for (const hash of [...hashes].sort()) {
        await sql`select pg_advisory_xact_lock(hashtextextended(${hash}, 0))`.execute(trx);
      }
    }
    const existing = await trx
      .selectFrom('vault_cards')
      .select('id')
      .where('pan_hmac', 'in', hashes)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .$if(this.db.engine === 'postgres', (query) => query.forShare())
      .executeTakeFirst();
    if (existing) return existing.id;
    const id = newId('vault');
    await trx
      .insertInto('vault_cards')
      .values({
        id,
        pan_ciphertext: this.keyRing.seal(pan, 'vault_cards.pan_ciphertext', id),
        pan_hmac: hashes[0] as string,
        created_at: Date.now(),
        erased_at: null,
      })
      .execute();
    return id;
  }

  /** When each entry's number was erased (vault/erasure.ts): null for one still held. */
  async erasedAt(vaultIds: readonly string[]): Promise<Map<string, number | null>> {
    if (vaultIds.length === 0) return new Map();
    const rows = await this.db.kysely
      .selectFrom('vault_cards')
      .select(['id', 'erased_at'])
      .where('id', 'in', vaultIds)
      .execute();
    return new Map(rows.map((row) => [row.id, row.erased_at]));
  }

  async reveal(vaultId: string): Promise<Secret<string>> {
    const [row] = await this.#entry(vaultId);
    if (!row) throw new Error(`vault: no card ${vaultId}`);
    if (row.erased_at !== null) throw new ErasedCardError();
    return new Secret(this.keyRing.open(row.pan_ciphertext, 'vault_cards.pan_ciphertext', vaultId));
  }
}
