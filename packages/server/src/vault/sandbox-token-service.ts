import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { type Db, prepared } from '../db/index.js';
import type { NetworkTokensTable } from '../db/schema.js';
import { Secret } from '../secret.js';
import type { KeyRing } from './keyring.js';
import type { NetworkToken, TokenService } from './token-service.js';
import { type CardVault, cardNetwork, luhnCheckDigit } from './vault.js';

/** Number ranges a token is drawn from, so that it routes on the same network as its card. */
const NETWORK_RANGES: Record<string, { prefixes: string[]; length: number }> = {
  visa: { prefixes: ['4'], length: 16 },
  mastercard: { prefixes: ['51', '52', '53', '54', '55'], length: 16 },
  amex: { prefixes: ['34', '37'], length: 15 },
  discover: { prefixes: ['6011'], length: 16 },
};

/** Token life in years from the month it is provisioned. */
const TOKEN_LIFE_YEARS = 3;

/** 20 bytes: the size of a real token authentication verification value (TAVV), 28 base64 characters. */
const CRYPTOGRAM_BYTES = 20;

/** Draws before a token on a network outside NETWORK_RANGES is kept although it reads as another one. */
const MAX_DRAWS = 1_000;

/**
 * A random Luhn-valid number on the card's network, ending in the card's last four digits, so that the
 * sandbox gateway, which decides by the last four, gives a token the outcome of its card. Never the card
 * number itself. On the four networks of NETWORK_RANGES it is drawn from the network's own range (again
 * when it falls in another network's range inside it: Elo issues some Visa-like 4… numbers); on any other
 * it keeps the card's first six digits, and is drawn again until it reads as the card's network (JCB,
 * Diners, UnionPay, Elo, Mir… share first digits with each other). So a merchant reading the token's
 * network finds the card's.
 */
export function sandboxTokenNumber(pan: string, brand: string): string {
  const known = NETWORK_RANGES[brand];
  const range = known ?? { prefixes: [pan.slice(0, 6)], length: pan.length };
  const network = known ? brand : cardNetwork(pan);
  const lastFour = pan.slice(-4);
  for (let draw = 1; ; draw++) {
    const prefix = range.prefixes[randomInt(range.prefixes.length)] as string;
    // One digit short: the digit before the last four is chosen below to make the whole number Luhn-valid.
    const middleLength = range.length - prefix.length - lastFour.length - 1;
    let middle = '';
    while (middle.length < middleLength) middle += String(randomInt(10));
    // Every digit 0–9 adds a different amount mod 10 to the Luhn sum, doubled or not, so exactly one fits.
    for (let digit = 0; digit <= 9; digit++) {
      const token = `${prefix}${middle}${digit}${lastFour}`;
      if (luhnCheckDigit(token.slice(0, -1)) !== token.slice(-1) || token === pan) continue;
      if (network === undefined || cardNetwork(token) === network) return token;
      if (!known && draw >= MAX_DRAWS) return token;
    }
  }
}

function cryptogramKey(keyRing: KeyRing, keyId: string | null): Buffer {
  return keyRing.deriveKey('sandbox-cryptogram', keyId);
}

function computeCryptogram(key: Buffer, token: string, requestId: string): Buffer {
  // Token digits never contain ':', so no two (token, requestId) pairs share an input.
  return createHmac('sha256', key).update(`${token}:${requestId}`).digest().subarray(0, CRYPTOGRAM_BYTES);
}

/**
 * Whether `cryptogram` is the one issued for this token and credentials request, under any key of the
 * ring (the request's key need not be the primary one any more).
 */
export function verifyCryptogram(
  keyRing: KeyRing,
  token: string,
  requestId: string,
  cryptogram: string,
): boolean {
  const given = Buffer.from(cryptogram, 'base64');
  if (given.length !== CRYPTOGRAM_BYTES || given.toString('base64') !== cryptogram) return false;
  return keyRing.keyIds
    .map((keyId) =>
      timingSafeEqual(given, computeCryptogram(cryptogramKey(keyRing, keyId), token, requestId)),
    )
    .includes(true);
}

/**
 * Network tokens for staging: one per card, stored encrypted in `network_tokens` with the vault id as
 * associated data. Cryptograms are derived, never stored: HMAC of token and credentials request id under
 * a key derived from the key ring.
 */
export class SandboxTokenService implements TokenService {
  /** Derived keys by key id: one HKDF per key, not one per cryptogram. */
  readonly #cryptogramKeys = new Map<string, Buffer>();
  readonly #stored: (
    vaultId: string,
  ) => Promise<Pick<NetworkTokensTable, 'token_ciphertext' | 'exp_month' | 'exp_year'>[]>;

  constructor(
    private readonly db: Db,
    private readonly keyRing: KeyRing,
    private readonly vault: CardVault,
  ) {
    // Every NETWORK_TOKEN credential reads one: compiled once (see `prepared`).
    this.#stored = prepared(
      db,
      (vaultId: string) =>
        db.kysely
          .selectFrom('network_tokens')
          .select(['token_ciphertext', 'exp_month', 'exp_year'])
          .where('vault_id', '=', vaultId),
      [''],
    );
  }

  async networkToken(card: { vaultId: string; brand: string }): Promise<NetworkToken> {
    const existing = await this.#find(card.vaultId);
    if (existing) return existing;
    const pan = await this.vault.reveal(card.vaultId);
    const now = new Date();
    await this.db.kysely
      .insertInto('network_tokens')
      .values({
        vault_id: card.vaultId,
        token_ciphertext: this.keyRing.seal(
          sandboxTokenNumber(pan.reveal(), card.brand),
          'network_tokens.token_ciphertext',
          card.vaultId,
        ),
        exp_month: now.getUTCMonth() + 1,
        exp_year: now.getUTCFullYear() + TOKEN_LIFE_YEARS,
        created_at: now.getTime(),
      })
      // Another process may provision the same card at the same time: the first row wins for both.
      .onConflict((conflict) => conflict.column('vault_id').doNothing())
      .execute();
    const provisioned = await this.#find(card.vaultId);
    if (!provisioned) throw new Error(`network token for ${card.vaultId} vanished after provisioning`);
    return provisioned;
  }

  cryptogramKeyId(): string {
    return this.keyRing.primaryKeyId;
  }

  cryptogram(token: NetworkToken, request: { id: string; cryptogramKeyId: string | null }): Secret<string> {
    const keyId = request.cryptogramKeyId ?? this.keyRing.primaryKeyId;
    let key = this.#cryptogramKeys.get(keyId);
    if (key === undefined) {
      key = cryptogramKey(this.keyRing, keyId);
      // A key the ring does not hold gives the primary key's: not remembered under that id, which the
      // ring may learn later (a staging ring reads its key file again).
      if (this.keyRing.keyIds.includes(keyId)) this.#cryptogramKeys.set(keyId, key);
    }
    return new Secret(computeCryptogram(key, token.token.reveal(), request.id).toString('base64'));
  }

  async #find(vaultId: string): Promise<NetworkToken | undefined> {
    const [row] = await this.#stored(vaultId);
    if (!row) return undefined;
    return {
      token: new Secret(this.keyRing.open(row.token_ciphertext, 'network_tokens.token_ciphertext', vaultId)),
      expMonth: row.exp_month,
      expYear: row.exp_year,
    };
  }
}
