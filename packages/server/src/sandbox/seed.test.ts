import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../db/index.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from '../vault/keyring.js';
import { CardVault } from '../vault/vault.js';
import { Wallet } from '../wallet/index.js';
import { seedStaging, TEST_CARDS, TEST_SHOPPER_EMAIL } from './seed.js';

describe('TEST_CARDS', () => {
  it('gives each card the last four of its number', () => {
    for (const card of TEST_CARDS) expect(card.pan.slice(-4)).toBe(card.last4);
  });
});

describe.each(engines())('seedStaging on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let wallet: Wallet;
  beforeAll(async () => {
    handle = await openTestDb(engine);
    wallet = new Wallet(
      handle.db,
      new CardVault(handle.db, new KeyRing([{ id: 'k1', key: randomBytes(32) }])),
    );
  });
  afterAll(() => handle.close());

  async function counts(): Promise<Record<string, number>> {
    const { kysely } = handle.db;
    const tables = ['shoppers', 'addresses', 'cards', 'vault_cards'] as const;
    const entries = await Promise.all(
      tables.map(async (table) => {
        const rows = await kysely.selectFrom(table).select('created_at').execute();
        return [table, rows.length] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  it('creates the test shopper with one default address and the five test cards', async () => {
    const shopper = await seedStaging(handle.db, wallet);
    expect(shopper).toMatchObject({
      email: TEST_SHOPPER_EMAIL,
      phone: '+15125550100',
      firstName: 'Taylor',
      lastName: 'Shopper',
    });
    const addresses = await wallet.listAddresses(shopper.id);
    expect(addresses).toHaveLength(1);
    expect(addresses[0]).toMatchObject({
      address1: '100 Congress Ave',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
      isDefaultBilling: true,
      isDefaultShipping: true,
    });
    const cards = await wallet.listCards(shopper.id);
    expect(cards.map((card) => card.last4).sort()).toEqual(['0002', '0069', '0119', '1111', '4444']);
    expect(cards[0]).toMatchObject({ last4: '1111', brand: 'visa', isDefault: true });
    const expYear = new Date().getUTCFullYear() + 3;
    for (const card of cards) {
      const expected = TEST_CARDS.find((test) => test.last4 === card.last4);
      expect(card).toMatchObject({
        brand: expected?.brand,
        expMonth: 12,
        expYear,
        nameOnCard: 'Taylor Shopper',
        billingAddressId: addresses[0]?.id,
      });
    }
  });

  it('creates nothing the second time', async () => {
    const before = await counts();
    expect(before).toEqual({ shoppers: 1, addresses: 1, cards: 5, vault_cards: 5 });
    const shopper = await seedStaging(handle.db, wallet);
    expect(await counts()).toEqual(before);
    expect((await wallet.listCards(shopper.id))[0]?.last4).toBe('1111');
  });

  it('seeds once when two processes start on a new database at the same moment', async () => {
    const fresh = await openTestDb(engine);
    const other = createDb(fresh.url);
    try {
      const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);
      const handles = [fresh.db, other];
      const wallets = handles.map((db) => new Wallet(db, new CardVault(db, keyRing)));
      const [first, second] = await Promise.all(
        handles.map((db, index) => seedStaging(db, wallets[index] as Wallet)),
      );
      expect(second?.id).toBe(first?.id);
      const shopperId = first?.id as string;
      expect(await wallets[0]?.listAddresses(shopperId)).toHaveLength(1);
      expect(await wallets[0]?.listCards(shopperId)).toHaveLength(TEST_CARDS.length);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('brings back a test card the shopper removed, keeping its paymentId and the edits to the others', async () => {
    const shopper = await seedStaging(handle.db, wallet);
    const seeded = await wallet.listCards(shopper.id);
    const visa = seeded.find((card) => card.last4 === '1111');
    const mastercard = seeded.find((card) => card.last4 === '4444');
    if (!visa || !mastercard) throw new Error('the seeded wallet lost its cards');
    await wallet.editCard(shopper.id, mastercard.id, { nickname: 'Work' });
    await wallet.removeCard(shopper.id, visa.id);
    expect((await wallet.listCards(shopper.id)).map((card) => card.last4)).not.toContain('1111');

    await seedStaging(handle.db, wallet);
    const cards = await wallet.listCards(shopper.id);
    expect(cards.map((card) => card.last4).sort()).toEqual(['0002', '0069', '0119', '1111', '4444']);
    expect(cards.find((card) => card.last4 === '1111')?.id).toBe(visa.id);
    expect(cards.find((card) => card.last4 === '4444')?.nickname).toBe('Work');
    expect(await counts()).toMatchObject({ cards: 5, vault_cards: 5 });
    const events = await handle.db.kysely
      .selectFrom('audit_events')
      .select(['actor', 'action'])
      .orderBy('seq')
      .execute();
    expect(events.at(-1)).toEqual({ actor: 'service', action: 'wallet.card_added' });
  });
});
