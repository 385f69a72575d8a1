import { randomBytes } from 'node:crypto';
import cardValidator from 'card-validator';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeInVault } from '../test-support/cards.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from './keyring.js';
import { SandboxTokenService, sandboxTokenNumber, verifyCryptogram } from './sandbox-token-service.js';
import { CardVault, cardNetwork, luhnCheckDigit, passesLuhn } from './vault.js';

/** An independent Luhn check (sum of doubled digits), so the property does not test the code with itself. */
function luhnSum(digits: string): number {
  return [...digits]
    .reverse()
    .map(Number)
    .reduce(
      (sum, digit, index) => sum + (index % 2 === 1 ? ((digit * 2) % 10) + Math.floor(digit / 5) : digit),
      0,
    );
}

const NETWORKS = [
  { brand: 'visa', prefix: '4', length: 16, validatorType: 'visa' },
  { brand: 'mastercard', prefix: '52', length: 16, validatorType: 'mastercard' },
  { brand: 'amex', prefix: '37', length: 15, validatorType: 'american-express' },
  { brand: 'discover', prefix: '6011', length: 16, validatorType: 'discover' },
  { brand: 'jcb', prefix: '3', length: 16, validatorType: undefined },
  { brand: 'unionpay', prefix: '62', length: 19, validatorType: undefined },
];

/** Luhn-valid card numbers of every network above. */
const cardNumbers = fc.constantFrom(...NETWORKS).chain((network) =>
  fc
    .array(fc.integer({ min: 0, max: 9 }), {
      minLength: network.length - network.prefix.length - 1,
      maxLength: network.length - network.prefix.length - 1,
    })
    .map((digits) => {
      const payload = network.prefix + digits.join('');
      return { network, pan: payload + luhnCheckDigit(payload) };
    }),
);

describe('sandboxTokenNumber', () => {
  it('gives a Luhn-valid number on the same network with the card’s last four, never the card number', () => {
    fc.assert(
      fc.property(cardNumbers, ({ network, pan }) => {
        expect(luhnSum(pan) % 10).toBe(0);
        const token = sandboxTokenNumber(pan, network.brand);
        expect(token).not.toBe(pan);
        expect(token.slice(-4)).toBe(pan.slice(-4));
        expect(token).toMatch(/^\d+$/);
        expect(luhnSum(token) % 10).toBe(0);
        expect(passesLuhn(token)).toBe(true);
        expect(token).toHaveLength(network.length);
        if (network.validatorType) {
          const checked = cardValidator.number(token);
          expect(checked.isValid).toBe(true);
          expect(checked.card?.type).toBe(network.validatorType);
        } else {
          expect(token.slice(0, 6)).toBe(pan.slice(0, 6));
          expect(cardNetwork(token)).toBe(cardNetwork(pan));
        }
      }),
      { numRuns: 500 },
    );
  });

  // First six digits on networks that share their first digits with others (card-validator's ranges).
  it.each([
    ['jcb', '353011'],
    ['diners-club', '305693'],
    ['unionpay', '620000'],
    ['elo', '636297'],
    ['mir', '220000'],
    ['hipercard', '606282'],
    ['maestro', '675964'],
  ])('keeps a %s card’s tokens on its network', (network, bin) => {
    const payload = `${bin}${'3'.repeat(9)}`;
    const pan = payload + luhnCheckDigit(payload);
    expect(cardNetwork(pan)).toBe(network);
    for (let i = 0; i < 200; i++) expect(cardNetwork(sandboxTokenNumber(pan, network))).toBe(network);
  });
});

describe.each(engines())('SandboxTokenService on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  const k1 = randomBytes(32);
  const keyRing = new KeyRing([{ id: 'k1', key: k1 }]);
  let vault: CardVault;
  let tokens: SandboxTokenService;
  beforeAll(async () => {
    handle = await openTestDb(engine);
    vault = new CardVault(handle.db, keyRing);
    tokens = new SandboxTokenService(handle.db, keyRing, vault);
  });
  afterAll(() => handle.close());

  it.each([
    ['visa', '4111111111111111', /^4\d{15}$/],
    ['mastercard', '5555555555554444', /^5[1-5]\d{14}$/],
    ['amex', '378282246310005', /^3[47]\d{13}$/],
    ['discover', '6011111111111117', /^6011\d{12}$/],
  ])('provisions a %s token on the same network with its own expiry', async (brand, pan, shape) => {
    const vaultId = await storeInVault(handle.db, vault, pan);
    const token = await tokens.networkToken({ vaultId, brand });
    const number = token.token.reveal();
    expect(number).toMatch(shape);
    expect(number).not.toBe(pan);
    expect(number.slice(-4)).toBe(pan.slice(-4));
    expect(passesLuhn(number)).toBe(true);
    const now = new Date();
    expect(token.expMonth).toBe(now.getUTCMonth() + 1);
    expect(token.expYear).toBe(now.getUTCFullYear() + 3);
  });

  it('returns the same token on later calls and from a fresh instance, stored encrypted', async () => {
    const vaultId = await storeInVault(handle.db, vault, '4000000000000002');
    const first = await tokens.networkToken({ vaultId, brand: 'visa' });
    const again = await tokens.networkToken({ vaultId, brand: 'visa' });
    const fresh = await new SandboxTokenService(
      handle.db,
      keyRing,
      new CardVault(handle.db, keyRing),
    ).networkToken({
      vaultId,
      brand: 'visa',
    });
    expect(again.token.reveal()).toBe(first.token.reveal());
    expect(fresh.token.reveal()).toBe(first.token.reveal());
    expect(fresh.expYear).toBe(first.expYear);
    const row = await handle.db.kysely
      .selectFrom('network_tokens')
      .selectAll()
      .where('vault_id', '=', vaultId)
      .executeTakeFirstOrThrow();
    expect(row.token_ciphertext).not.toContain(first.token.reveal());
    expect(keyRing.open(row.token_ciphertext, 'network_tokens.token_ciphertext', vaultId)).toBe(
      first.token.reveal(),
    );
  });

  it('agrees with itself when two provisions of one card race', async () => {
    const vaultId = await storeInVault(handle.db, vault, '4000000000000069');
    const [a, b] = await Promise.all([
      tokens.networkToken({ vaultId, brand: 'visa' }),
      tokens.networkToken({ vaultId, brand: 'visa' }),
    ]);
    expect(a.token.reveal()).toBe(b.token.reveal());
  });

  it('derives a cryptogram per credentials request, the same on a retry', async () => {
    const vaultId = await storeInVault(handle.db, vault, '4000000000000119');
    const token = await tokens.networkToken({ vaultId, brand: 'visa' });
    expect(tokens.cryptogramKeyId()).toBe('k1');
    const request = (id: string) => ({ id, cryptogramKeyId: tokens.cryptogramKeyId() });
    const first = tokens.cryptogram(token, request('crq_1'));
    expect(first.reveal()).toHaveLength(28);
    expect(Buffer.from(first.reveal(), 'base64')).toHaveLength(20);
    expect(String(first)).toBe('[redacted]');
    expect(tokens.cryptogram(token, request('crq_1')).reveal()).toBe(first.reveal());
    expect(tokens.cryptogram(token, request('crq_2')).reveal()).not.toBe(first.reveal());
    const number = token.token.reveal();
    expect(verifyCryptogram(keyRing, number, 'crq_1', first.reveal())).toBe(true);
    expect(verifyCryptogram(keyRing, number, 'crq_2', first.reveal())).toBe(false);
    expect(verifyCryptogram(keyRing, number, 'crq_1', 'not a cryptogram')).toBe(false);
    const otherRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);
    expect(verifyCryptogram(otherRing, number, 'crq_1', first.reveal())).toBe(false);
  });

  it("keeps a request's cryptogram through a key rotation: it follows the key named with the request", async () => {
    const vaultId = await storeInVault(handle.db, vault, '4000000000000127');
    const token = await tokens.networkToken({ vaultId, brand: 'visa' });
    const before = tokens.cryptogram(token, { id: 'crq_1', cryptogramKeyId: 'k1' }).reveal();
    expect(tokens.cryptogram(token, { id: 'crq_1', cryptogramKeyId: null }).reveal()).toBe(before);

    // k2 becomes the primary key; k1 still decrypts, as during and after `vault rotate-key`.
    const rotatedRing = new KeyRing([
      { id: 'k2', key: randomBytes(32) },
      { id: 'k1', key: k1 },
    ]);
    const after = new SandboxTokenService(handle.db, rotatedRing, new CardVault(handle.db, rotatedRing));
    expect(after.cryptogramKeyId()).toBe('k2');
    expect(after.cryptogram(token, { id: 'crq_1', cryptogramKeyId: 'k1' }).reveal()).toBe(before);
    const underNew = after.cryptogram(token, { id: 'crq_1', cryptogramKeyId: null }).reveal();
    expect(underNew).not.toBe(before);
    expect(after.cryptogram(token, { id: 'crq_1', cryptogramKeyId: 'k2' }).reveal()).toBe(underNew);
    // A key no longer in the ring falls back to the primary one.
    expect(after.cryptogram(token, { id: 'crq_1', cryptogramKeyId: 'k0' }).reveal()).toBe(underNew);
    expect(verifyCryptogram(rotatedRing, token.token.reveal(), 'crq_1', before)).toBe(true);
    expect(verifyCryptogram(rotatedRing, token.token.reveal(), 'crq_1', underNew)).toBe(true);
  });
});
