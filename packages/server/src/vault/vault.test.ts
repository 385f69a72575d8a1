import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { storeInVault } from '../test-support/cards.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from './keyring.js';
import { reencryptAll } from './rotate.js';
import { SandboxTokenService } from './sandbox-token-service.js';
import { CardVault, cardNetwork, luhnCheckDigit, passesLuhn } from './vault.js';

const VISA = '4111111111111111';

describe('passesLuhn', () => {
  it('accepts valid numbers and rejects a changed digit', () => {
    expect(passesLuhn(VISA)).toBe(true);
    expect(passesLuhn('378282246310005')).toBe(true);
    expect(passesLuhn('4111111111111112')).toBe(false);
  });
});

describe('cardNetwork', () => {
  const complete = (payload: string) => payload + luhnCheckDigit(payload);

  it('names the network as the webhook does, an Elo range inside Visa-like numbers included', () => {
    expect(cardNetwork('4111111111111111')).toBe('visa');
    expect(cardNetwork('5555555555554444')).toBe('mastercard');
    expect(cardNetwork('378282246310005')).toBe('amex');
    expect(cardNetwork('6011111111111117')).toBe('discover');
    expect(cardNetwork(complete('401178000000000'))).toBe('elo');
    expect(cardNetwork(complete('999999999999999'))).toBeUndefined();
  });
});

describe.each(engines())('CardVault on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  const k1 = { id: 'k1', key: randomBytes(32) };
  const keyRing = new KeyRing([k1]);
  let vault: CardVault;
  beforeAll(async () => {
    handle = await openTestDb(engine);
    vault = new CardVault(handle.db, keyRing);
  });
  afterAll(() => handle.close());

  it('stores a card number and reveals it', async () => {
    const vaultId = await storeInVault(handle.db, vault, VISA);
    expect(vaultId).toMatch(/^vlt_/);
    expect((await vault.reveal(vaultId)).reveal()).toBe(VISA);
  });

  it('returns the existing vault id for a number already stored', async () => {
    const first = await storeInVault(handle.db, vault, '5555555555554444');
    expect(await storeInVault(handle.db, vault, '5555555555554444')).toBe(first);
    expect(await storeInVault(handle.db, vault, '4000000000000002')).not.toBe(first);
    const rows = await handle.db.kysely.selectFrom('vault_cards').select('id').execute();
    expect(rows).toHaveLength(3);
  });

  it('finds a number stored before a new primary key, before and after the rotation recomputes its hash', async () => {
    // A database of its own: the rotation re-encrypts every row under a key the other tests' ring lacks.
    const own = await openTestDb(engine);
    try {
      const pan = '5105105105105100';
      const first = await storeInVault(own.db, new CardVault(own.db, keyRing), pan);
      const rotatedRing = new KeyRing([{ id: 'k2', key: randomBytes(32) }, k1]);
      const rotated = new CardVault(own.db, rotatedRing);
      expect(await storeInVault(own.db, rotated, pan)).toBe(first);
      await reencryptAll(own.db, rotatedRing);
      expect(await storeInVault(own.db, rotated, pan)).toBe(first);
      expect((await rotated.reveal(first)).reveal()).toBe(pan);
      const rows = await own.db.kysely.selectFrom('vault_cards').select('id').execute();
      expect(rows.map((row) => row.id)).toEqual([first]);
    } finally {
      await own.close();
    }
  });

  it('never stores the number in clear', async () => {
    const pan = '4000000000000069';
    const vaultId = await storeInVault(handle.db, vault, pan);
    const row = await handle.db.kysely
      .selectFrom('vault_cards')
      .selectAll()
      .where('id', '=', vaultId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(pan);
    expect(row.pan_hmac).toBe(keyRing.hmac(pan));
  });

  // The file check is about SQLite's own files; PostgreSQL's storage is covered by the column checks above.
  if (engine === 'sqlite') {
    it('leaves no card number in the SQLite file or its write-ahead log', async () => {
      const pan = '4000000000000119';
      await storeInVault(handle.db, vault, pan);
      const file = path.join(handle.dataDir, 'wallet.db');
      const files = [file, `${file}-wal`].filter((name) => fs.existsSync(name));
      expect(files).toContain(`${file}-wal`);
      for (const name of files) {
        const bytes = fs.readFileSync(name);
        expect(bytes.includes(Buffer.from(pan))).toBe(false);
        expect(bytes.includes(Buffer.from(VISA))).toBe(false);
      }
    });
  }

  it('rejects bad numbers without echoing them', async () => {
    for (const pan of ['4111111111111112', '4111-1111-1111-1111', '41111111111', '41111111111111111111']) {
      const error = await storeInVault(handle.db, vault, pan).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).errorCode).toBe('VALIDATION_ERROR');
      expect((error as DomainError).message).toMatch(/^pan: /);
      expect((error as DomainError).message).not.toContain(pan);
    }
  });

  it('cannot decrypt with a different key', async () => {
    const vaultId = await storeInVault(handle.db, vault, VISA);
    const impostor = new CardVault(handle.db, new KeyRing([{ id: 'k1', key: randomBytes(32) }]));
    await expect(impostor.reveal(vaultId)).rejects.toThrow();
    const stranger = new CardVault(handle.db, new KeyRing([{ id: 'k2', key: randomBytes(32) }]));
    await expect(stranger.reveal(vaultId)).rejects.toThrow(/not in the key ring/);
  });

  it("refuses the card's network token copied into its card-number column", async () => {
    const vaultId = await storeInVault(handle.db, vault, '4000056655665556');
    const token = await new SandboxTokenService(handle.db, keyRing, vault).networkToken({
      vaultId,
      brand: 'visa',
    });
    const { token_ciphertext } = await handle.db.kysely
      .selectFrom('network_tokens')
      .select('token_ciphertext')
      .where('vault_id', '=', vaultId)
      .executeTakeFirstOrThrow();
    expect(token.token.reveal()).not.toBe('4000056655665556');
    await handle.db.kysely
      .updateTable('vault_cards')
      .set({ pan_ciphertext: token_ciphertext })
      .where('id', '=', vaultId)
      .execute();
    await expect(vault.reveal(vaultId)).rejects.toThrow();
  });

  it('refuses a ciphertext moved onto another vault id', async () => {
    const a = await storeInVault(handle.db, vault, '6011111111111117');
    const b = await storeInVault(handle.db, vault, '378282246310005');
    const { pan_ciphertext } = await handle.db.kysely
      .selectFrom('vault_cards')
      .select('pan_ciphertext')
      .where('id', '=', a)
      .executeTakeFirstOrThrow();
    await handle.db.kysely.updateTable('vault_cards').set({ pan_ciphertext }).where('id', '=', b).execute();
    await expect(vault.reveal(b)).rejects.toThrow();
  });
});
