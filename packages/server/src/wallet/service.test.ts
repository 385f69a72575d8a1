import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../audit/index.js';
import { DomainError } from '../errors.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { visaNumber } from '../test-support/cards.js';
import { engines, openTestDb } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { KeyRing } from '../vault/keyring.js';
import { CardVault } from '../vault/vault.js';
import { MAX_ADDRESSES, MAX_CARDS, type NewAddress, Wallet } from './index.js';

const ADDRESS: NewAddress = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  address1: '1 Main St',
  city: 'Austin',
  state: 'TX',
  zip: '78701',
  country: 'US',
};

const FUTURE_YEAR = new Date().getUTCFullYear() + 2;

async function errorOf(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

describe.each(engines())('Wallet on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let wallet: Wallet;
  let vault: CardVault;
  beforeAll(async () => {
    handle = await openTestDb(engine);
    vault = new CardVault(handle.db, new KeyRing([{ id: 'k1', key: randomBytes(32) }]));
    wallet = new Wallet(handle.db, vault);
  });
  afterAll(() => handle.close());

  let counter = 0;
  async function newShopper() {
    counter++;
    const shopper = await wallet.createShopper({
      email: `shopper${counter}@example.com`,
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    const address = await wallet.addAddress(shopper.id, ADDRESS);
    return { shopper, address };
  }

  /** The `serial`th test Visa number for the shopper's wallet. */
  const visaInput = (shopperId: string, serial: number, billingAddressId: number) => ({
    shopperId,
    pan: visaNumber(serial),
    expMonth: 12,
    expYear: FUTURE_YEAR,
    nameOnCard: 'Ada Lovelace',
    billingAddressId,
  });
  const saveVisa = (shopperId: string, serial: number, billingAddressId: number) =>
    wallet.saveCard(visaInput(shopperId, serial, billingAddressId));

  describe('shoppers', () => {
    it('finds a shopper by email whatever its case and surrounding spaces', async () => {
      const created = await wallet.createShopper({
        email: 'Mixed.Case@Example.COM',
        phone: '+15125550100',
        firstName: 'Mixed',
        lastName: 'Case',
      });
      expect(created).toMatchObject({ email: 'Mixed.Case@Example.COM', phone: '+15125550100' });
      expect(created.id).toMatch(/^shp_/);
      expect(await wallet.findShopperByEmail('  mixed.case@example.com ')).toEqual(created);
      expect(await wallet.getShopper(created.id)).toEqual(created);
      expect(await wallet.findShopperByEmail('nobody@example.com')).toBeUndefined();
    });

    it('refuses a second shopper with the same email in another case', async () => {
      await wallet.createShopper({ email: 'twice@example.com', firstName: 'A', lastName: 'B' });
      const error = await errorOf(
        wallet.createShopper({ email: 'TWICE@example.com', firstName: 'C', lastName: 'D' }),
      );
      expect(error.errorCode).toBe('SHOPPER_ALREADY_EXISTS');
      expect(error.message).toMatch(/^email: /);
    });

    it('refuses an address that is not an email, and an unknown shopper id', async () => {
      const invalid = await errorOf(wallet.createShopper({ email: 'nope', firstName: 'A', lastName: 'B' }));
      expect(invalid.errorCode).toBe('VALIDATION_ERROR');
      expect((await errorOf(wallet.getShopper('shp_missing'))).errorCode).toBe('SHOPPER_NOT_FOUND');
    });
  });

  describe('addresses', () => {
    it('makes the first address the default of both kinds', async () => {
      const { address } = await newShopper();
      expect(address).toMatchObject({ isDefaultBilling: true, isDefaultShipping: true, company: null });
      expect(address.externalId).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof address.id).toBe('number');
      expect(await wallet.findAddress(address.id)).toEqual(address);
    });

    it('moves a default to the new address that claims it, and lists defaults first', async () => {
      const { shopper, address: first } = await newShopper();
      const plain = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '2 Side St' });
      expect(plain).toMatchObject({ isDefaultBilling: false, isDefaultShipping: false });
      const shipping = await wallet.addAddress(shopper.id, {
        ...ADDRESS,
        address1: '3 Ship St',
        isDefaultShipping: true,
      });
      const listed = await wallet.listAddresses(shopper.id);
      expect(listed.map((address) => address.address1)).toEqual(['1 Main St', '3 Ship St', '2 Side St']);
      expect(listed[0]).toMatchObject({ id: first.id, isDefaultBilling: true, isDefaultShipping: false });
      expect(listed[1]).toMatchObject({ id: shipping.id, isDefaultBilling: false, isDefaultShipping: true });
    });

    it('removes an address: the defaults pass to the newest left, and a card cannot take it', async () => {
      const { shopper, address: first } = await newShopper();
      const second = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '2 Side St' });
      await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '3 Last St' });

      await wallet.removeAddress(shopper.id, first.id);
      const listed = await wallet.listAddresses(shopper.id);
      expect(
        listed.map((address) => [address.address1, address.isDefaultBilling, address.isDefaultShipping]),
      ).toEqual([
        ['3 Last St', true, true],
        ['2 Side St', false, false],
      ]);
      const removed = await wallet.findAddress(first.id);
      expect(removed).toMatchObject({ removedAt: expect.any(Number), isDefaultBilling: false });
      expect(
        (await wallet.listAddresses(shopper.id, { removed: true })).map((address) => address.id),
      ).toContain(first.id);
      // Removing it again changes nothing; another shopper's address is not found.
      await wallet.removeAddress(shopper.id, first.id);
      expect(await wallet.findAddress(first.id)).toEqual(removed);
      const { shopper: other } = await newShopper();
      expect((await errorOf(wallet.removeAddress(other.id, second.id))).errorCode).toBe('ADDRESS_NOT_FOUND');
      // A removed address is no billing address for a card.
      const refused = await errorOf(saveVisa(shopper.id, 301, first.id));
      expect([refused.errorCode, refused.message]).toEqual([
        'VALIDATION_ERROR',
        "billingAddressId: no such address in the shopper's wallet",
      ]);
    });

    it('keeps the billing address of a card in the wallet until that card leaves or takes another', async () => {
      const { shopper, address } = await newShopper();
      const other = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '2 Side St' });
      const { card } = await saveVisa(shopper.id, 310, address.id);
      const inUse = await errorOf(wallet.removeAddress(shopper.id, address.id));
      expect([inUse.errorCode, inUse.status]).toEqual(['ADDRESS_IN_USE', 409]);
      expect(inUse.message).toContain('Visa card ending in');
      // Saved again with the other address, the card lets go of this one.
      await saveVisa(shopper.id, 310, other.id);
      await wallet.removeAddress(shopper.id, address.id);
      expect((await wallet.findAddress(address.id))?.removedAt).toEqual(expect.any(Number));
      // A removed card holds nothing.
      await wallet.removeCard(shopper.id, card.id);
      await wallet.removeAddress(shopper.id, other.id);
      expect(await wallet.listAddresses(shopper.id)).toEqual([]);
    });

    it('never saves a card on an address removed at the same moment', async () => {
      const { shopper } = await newShopper();
      for (let round = 0; round < 10; round++) {
        const address = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: `${round} Race St` });
        const [removed, saved] = await Promise.allSettled([
          wallet.removeAddress(shopper.id, address.id),
          saveVisa(shopper.id, 400 + round, address.id),
        ]);
        // One of the two wins: the card holds the address, or the address went before the card came.
        expect([removed.status, saved.status].sort()).toEqual(['fulfilled', 'rejected']);
      }
    });

    it(`holds at most ${MAX_ADDRESSES} addresses; removing one makes room`, async () => {
      const { shopper, address } = await newShopper();
      for (let n = 2; n <= MAX_ADDRESSES; n++) {
        await wallet.addAddress(shopper.id, { ...ADDRESS, address1: `${n} Main St` });
      }
      const full = await errorOf(wallet.addAddress(shopper.id, ADDRESS));
      expect([full.errorCode, full.message]).toEqual([
        'WALLET_FULL',
        `The wallet already holds ${MAX_ADDRESSES} addresses, the most it can; remove one first.`,
      ]);
      await wallet.removeAddress(shopper.id, address.id);
      expect((await wallet.addAddress(shopper.id, ADDRESS)).address1).toBe('1 Main St');
    });

    it('edits an address by saving a new one in its place, with its defaults and its cards', async () => {
      const { shopper, address } = await newShopper();
      const card = (await saveVisa(shopper.id, 301, address.id)).card;
      const before = await wallet.findAddress(address.id);

      const edited = await wallet.editAddress(shopper.id, address.id, {
        address1: '2 Main St',
        address2: 'Apt 4',
      });
      expect(edited).toMatchObject({
        ...ADDRESS,
        address1: '2 Main St',
        address2: 'Apt 4',
        isDefaultBilling: true,
        isDefaultShipping: true,
        removedAt: null,
      });
      expect(edited.id).not.toBe(address.id);
      expect(edited.externalId).not.toBe(address.externalId);
      // The old one is out of the wallet, its values as they were: orders made with it still read them.
      expect(await wallet.findAddress(address.id)).toMatchObject({
        address1: '1 Main St',
        address2: null,
        isDefaultBilling: false,
        isDefaultShipping: false,
        removedAt: expect.any(Number),
      });
      expect(before?.removedAt).toBeNull();
      expect((await wallet.listAddresses(shopper.id)).map((a) => a.id)).toEqual([edited.id]);
      expect((await wallet.findCard(card.id))?.billingAddressId).toBe(edited.id);
      // Cleared with null; an edit of the replaced address is not found.
      expect((await wallet.editAddress(shopper.id, edited.id, { address2: null })).address2).toBeNull();
      const gone = await errorOf(wallet.editAddress(shopper.id, address.id, { city: 'Dallas' }));
      expect([gone.errorCode, gone.message]).toEqual([
        'ADDRESS_NOT_FOUND',
        `addressId: no address ${address.id} in the shopper's wallet.`,
      ]);
    });

    it('leaves an address as it is when nothing changes, and moves a default to the address that takes it', async () => {
      const { shopper, address: home } = await newShopper();
      const office = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '5 Office Park' });
      const same = await wallet.editAddress(shopper.id, home.id, { city: 'Austin', isDefaultShipping: true });
      expect(same).toEqual(await wallet.findAddress(home.id));
      expect(same.removedAt).toBeNull();

      const taken = await wallet.editAddress(shopper.id, office.id, { isDefaultShipping: true });
      expect([taken.id, taken.isDefaultShipping, taken.isDefaultBilling]).toEqual([office.id, true, false]);
      expect(await wallet.findAddress(home.id)).toMatchObject({
        isDefaultShipping: false,
        isDefaultBilling: true,
      });
      // A change of values and of default at once: the new address has both defaults.
      const moved = await wallet.editAddress(shopper.id, office.id, { zip: '78702', isDefaultBilling: true });
      expect(moved).toMatchObject({ zip: '78702', isDefaultShipping: true, isDefaultBilling: true });
      const listed = await wallet.listAddresses(shopper.id);
      expect(listed.map((a) => [a.id, a.isDefaultBilling, a.isDefaultShipping])).toEqual([
        [moved.id, true, true],
        [home.id, false, false],
      ]);

      const { shopper: other } = await newShopper();
      const refused = await errorOf(wallet.editAddress(other.id, home.id, { city: 'Dallas' }));
      expect(refused.errorCode).toBe('ADDRESS_NOT_FOUND');
      expect((await wallet.findAddress(home.id))?.city).toBe('Austin');
    });

    it('refuses an address for an unknown shopper', async () => {
      expect((await errorOf(wallet.addAddress('shp_missing', ADDRESS))).errorCode).toBe('SHOPPER_NOT_FOUND');
    });
  });

  describe('cards', () => {
    it('reads a card and its address back with exactly the domain fields, flags as booleans', async () => {
      const { shopper, address } = await newShopper();
      const card = await wallet.addCard({
        shopperId: shopper.id,
        pan: '4111111111111111',
        expMonth: 7,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        nickname: 'Work',
        needsCvv: true,
        billingAddressId: address.id,
      });
      expect(await wallet.findCard(card.id)).toStrictEqual({
        id: card.id,
        shopperId: shopper.id,
        vaultId: card.vaultId,
        billingAddressId: address.id,
        brand: 'visa',
        last4: '1111',
        expMonth: 7,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        nickname: 'Work',
        isDefault: true,
        needsCvv: true,
        removedAt: null,
      });
      expect(await wallet.findAddress(address.id)).toStrictEqual({
        id: address.id,
        externalId: address.externalId,
        shopperId: shopper.id,
        firstName: 'Ada',
        lastName: 'Lovelace',
        company: null,
        address1: '1 Main St',
        address2: null,
        city: 'Austin',
        state: 'TX',
        zip: '78701',
        country: 'US',
        phoneNumber: null,
        isDefaultBilling: true,
        isDefaultShipping: true,
        removedAt: null,
      });
      expect(await wallet.listCards(shopper.id)).toStrictEqual([await wallet.findCard(card.id)]);
    });

    it('saves a card with its brand and last four, the first one as default', async () => {
      const { shopper, address } = await newShopper();
      const card = await wallet.addCard({
        shopperId: shopper.id,
        pan: '3782 822463 10005',
        expMonth: 5,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        billingAddressId: address.id,
      });
      expect(card).toMatchObject({
        shopperId: shopper.id,
        brand: 'amex',
        last4: '0005',
        isDefault: true,
        needsCvv: false,
        nickname: null,
      });
      expect(card.id).toMatch(/^[0-9a-f-]{36}$/);
      expect((await vault.reveal(card.vaultId)).reveal()).toBe('378282246310005');
      expect(await wallet.findCard(card.id)).toEqual(card);
      expect(await wallet.findCard('00000000-0000-0000-0000-000000000000')).toBeUndefined();
    });

    it('lists the default first, then the newest, and returns the existing card for the same number', async () => {
      const { shopper, address } = await newShopper();
      const add = (pan: string, isDefault?: boolean) =>
        wallet.addCard({
          shopperId: shopper.id,
          pan,
          expMonth: 1,
          expYear: FUTURE_YEAR,
          nameOnCard: 'Ada Lovelace',
          billingAddressId: address.id,
          isDefault,
        });
      const visa = await add('4111111111111111', false);
      await tick();
      const mastercard = await add('5555555555554444');
      await tick();
      const discover = await add('6011111111111117');
      expect([visa.isDefault, mastercard.isDefault, discover.isDefault]).toEqual([true, false, false]);
      expect((await wallet.listCards(shopper.id)).map((card) => card.brand)).toEqual([
        'visa',
        'discover',
        'mastercard',
      ]);

      await tick();
      const amex = await add('378282246310005', true);
      const listed = await wallet.listCards(shopper.id);
      expect(listed.map((card) => card.id)).toEqual([amex.id, discover.id, mastercard.id, visa.id]);
      expect(listed.filter((card) => card.isDefault)).toHaveLength(1);

      expect(await add('5555-5555-5555-4444', true)).toEqual(mastercard);
      expect(await wallet.listCards(shopper.id)).toHaveLength(4);
    });

    it('refuses bad card input, naming the field', async () => {
      const { shopper, address } = await newShopper();
      const { address: foreign } = await newShopper();
      const good = {
        shopperId: shopper.id,
        pan: '4111111111111111',
        expMonth: 12,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        billingAddressId: address.id,
      };
      const cases: [Partial<typeof good>, RegExp][] = [
        [{ pan: '4111111111111112' }, /^pan: /],
        [{ pan: '1234567890123452' }, /^pan: the card network/],
        [{ expMonth: 13 }, /^expMonth: /],
        [{ expYear: 26 }, /^expYear: /],
        [{ expYear: 2001 }, /^expMonth\/expYear: the card has expired/],
        [{ nameOnCard: ' ' }, /^nameOnCard: /],
        [{ billingAddressId: foreign.id }, /^billingAddressId: /],
      ];
      for (const [change, message] of cases) {
        const error = await errorOf(wallet.addCard({ ...good, ...change }));
        expect(error.errorCode).toBe('VALIDATION_ERROR');
        expect(error.message).toMatch(message);
        expect(error.message).not.toContain(change.pan ?? good.pan);
      }
      expect(await wallet.listCards(shopper.id)).toEqual([]);
    });

    it('renews a card saved again by the shopper: the later expiry, the new name and billing address', async () => {
      const { shopper, address } = await newShopper();
      const moved = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '9 Elm St' });
      const save = (expMonth: number, expYear: number, nameOnCard: string, billingAddressId: number) =>
        wallet.saveCard({
          shopperId: shopper.id,
          pan: '4111 1111 1111 1111',
          expMonth,
          expYear,
          nameOnCard,
          billingAddressId,
        });
      const first = await save(1, FUTURE_YEAR, 'Ada Lovelace', address.id);
      expect(first.created).toBe(true);

      const renewed = await save(6, FUTURE_YEAR + 1, 'Ada King', moved.id);
      expect(renewed.created).toBe(false);
      expect(renewed.card).toEqual({
        ...first.card,
        expMonth: 6,
        expYear: FUTURE_YEAR + 1,
        nameOnCard: 'Ada King',
        billingAddressId: moved.id,
      });
      // An older card with the same number keeps the later expiry.
      const older = await save(3, FUTURE_YEAR, 'Ada King', moved.id);
      expect([older.card.expMonth, older.card.expYear]).toEqual([6, FUTURE_YEAR + 1]);
      expect(await wallet.listCards(shopper.id)).toEqual([older.card]);
      // addCard, as the enrolment and the sandbox seed use it, leaves a saved card as it is.
      const again = await wallet.addCard({
        shopperId: shopper.id,
        pan: '4111111111111111',
        expMonth: 12,
        expYear: FUTURE_YEAR + 5,
        nameOnCard: 'Someone Else',
        billingAddressId: address.id,
      });
      expect(again).toEqual(older.card);
    });

    it('makes a new card the default when the default one has expired, or when asked', async () => {
      const { shopper, address } = await newShopper();
      const save = (pan: string, isDefault?: boolean) =>
        wallet.saveCard({
          shopperId: shopper.id,
          pan,
          expMonth: 12,
          expYear: FUTURE_YEAR,
          nameOnCard: 'Ada Lovelace',
          billingAddressId: address.id,
          isDefault,
        });
      const visa = await save('4111111111111111');
      const mastercard = await save('5555555555554444');
      expect([visa.card.isDefault, mastercard.card.isDefault]).toEqual([true, false]);

      await handle.db.kysely
        .updateTable('cards')
        .set({ exp_year: 2001 })
        .where('id', '=', visa.card.id)
        .execute();
      const discover = await save('6011111111111117');
      expect(discover.card.isDefault).toBe(true);
      const amex = await save('378282246310005', true);
      expect(amex.card.isDefault).toBe(true);
      const defaults = (await wallet.listCards(shopper.id)).filter((card) => card.isDefault);
      expect(defaults.map((card) => card.id)).toEqual([amex.card.id]);

      // Renewing the expired card as the default moves the default back to it.
      const renewed = await wallet.saveCard({
        shopperId: shopper.id,
        pan: '4111111111111111',
        expMonth: 12,
        expYear: FUTURE_YEAR + 1,
        nameOnCard: 'Ada Lovelace',
        billingAddressId: address.id,
        isDefault: true,
      });
      expect(renewed).toMatchObject({ created: false, card: { id: visa.card.id, isDefault: true } });
      expect((await wallet.listCards(shopper.id)).filter((card) => card.isDefault)).toHaveLength(1);
    });

    it('keeps one default card and one default address when several are saved at once', async () => {
      const { shopper } = await newShopper();
      const addresses = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          wallet.addAddress(shopper.id, { ...ADDRESS, address1: `${i} Main St`, isDefaultShipping: true }),
        ),
      );
      const listed = await wallet.listAddresses(shopper.id);
      expect(listed).toHaveLength(9);
      expect(listed.filter((address) => address.isDefaultShipping)).toHaveLength(1);

      // No card yet: each new one, seeing no default, would claim it.
      const saved = await Promise.all(
        addresses.map((address, serial) => saveVisa(shopper.id, serial, address.id)),
      );
      expect(saved.every((entry) => entry.created)).toBe(true);
      const cards = await wallet.listCards(shopper.id);
      expect(cards).toHaveLength(8);
      expect(cards.filter((card) => card.isDefault)).toHaveLength(1);

      // The same number twice at once: one card, saved by one of them.
      const twice = await Promise.all(
        [0, 1].map(() => saveVisa(shopper.id, 150, cards[0]?.billingAddressId ?? 0)),
      );
      expect(twice.map((entry) => entry.created).sort()).toEqual([false, true]);
      expect(twice[0]?.card.id).toBe(twice[1]?.card.id);
      expect(await wallet.listCards(shopper.id)).toHaveLength(9);
    });

    it(`holds at most ${MAX_CARDS} cards, and still renews one of them when full`, async () => {
      const { shopper, address } = await newShopper();
      const save = (serial: number) => saveVisa(shopper.id, serial, address.id);
      for (let serial = 1; serial <= MAX_CARDS; serial++) expect((await save(serial)).created).toBe(true);
      const error = await errorOf(save(MAX_CARDS + 1));
      expect(error.errorCode).toBe('WALLET_FULL');
      expect(error.message).toContain(String(MAX_CARDS));
      expect((await save(1)).created).toBe(false);
      expect(await wallet.listCards(shopper.id)).toHaveLength(MAX_CARDS);
    });

    it('removes a card from the wallet, moves the default to the newest card that can pay, and brings it back when typed again', async () => {
      const { shopper, address } = await newShopper();
      const first = (await saveVisa(shopper.id, 201, address.id)).card;
      await tick();
      const second = (await saveVisa(shopper.id, 202, address.id)).card;
      await tick();
      const third = (await saveVisa(shopper.id, 203, address.id)).card;
      await handle.db.kysely
        .updateTable('cards')
        .set({ exp_year: 2001 })
        .where('id', '=', third.id)
        .execute();
      expect(first.isDefault).toBe(true);

      await wallet.removeCard(shopper.id, first.id);
      const listed = await wallet.listCards(shopper.id);
      // The newest card has expired: the default goes to the newest that can still pay.
      expect(listed.map((card) => [card.id, card.isDefault])).toEqual([
        [second.id, true],
        [third.id, false],
      ]);
      const removed = await wallet.findCard(first.id);
      expect(removed).toMatchObject({ isDefault: false, removedAt: expect.any(Number) });
      // Removing it again changes nothing; another shopper's card is not found.
      await wallet.removeCard(shopper.id, first.id);
      expect(await wallet.findCard(first.id)).toEqual(removed);
      const { shopper: other } = await newShopper();
      const error = await errorOf(wallet.removeCard(other.id, second.id));
      expect(error.errorCode).toBe('PAYMENT_METHOD_NOT_FOUND');

      const back = await saveVisa(shopper.id, 201, address.id);
      expect(back).toMatchObject({
        created: true,
        card: { id: first.id, removedAt: null, isDefault: false },
      });
      expect((await wallet.listCards(shopper.id)).map((card) => card.id)).toContain(first.id);
      // addCard, as the seed uses it, leaves a removed card removed.
      await wallet.removeCard(shopper.id, first.id);
      expect((await wallet.addCard(visaInput(shopper.id, 201, address.id))).removedAt).toEqual(
        expect.any(Number),
      );
    });

    it('edits a card in place: its nickname, name and billing address, and makes it the default', async () => {
      const { shopper, address } = await newShopper();
      const office = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '5 Office Park' });
      const first = (await saveVisa(shopper.id, 311, address.id)).card;
      const second = (await saveVisa(shopper.id, 312, address.id)).card;

      const edited = await wallet.editCard(shopper.id, second.id, {
        nickname: 'Travel',
        nameOnCard: 'A. Lovelace',
        billingAddressId: office.id,
        isDefault: true,
      });
      expect(edited).toMatchObject({
        id: second.id,
        nickname: 'Travel',
        nameOnCard: 'A. Lovelace',
        billingAddressId: office.id,
        isDefault: true,
        last4: second.last4,
        expYear: second.expYear,
      });
      expect((await wallet.findCard(first.id))?.isDefault).toBe(false);
      expect((await wallet.editCard(shopper.id, second.id, { nickname: null })).nickname).toBeNull();
      // The billing address is only one in the wallet; the name on the card is not blank.
      const removedAddress = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '9 Gone St' });
      await wallet.removeAddress(shopper.id, removedAddress.id);
      for (const [changes, message] of [
        [
          { billingAddressId: removedAddress.id },
          "billingAddressId: no such address in the shopper's wallet",
        ],
        [{ nameOnCard: '  ' }, 'nameOnCard: must not be empty'],
      ] as const) {
        const error = await errorOf(wallet.editCard(shopper.id, second.id, changes));
        expect([error.errorCode, error.message]).toEqual(['VALIDATION_ERROR', message]);
      }
      const { shopper: other, address: theirs } = await newShopper();
      const foreign = await errorOf(wallet.editCard(shopper.id, second.id, { billingAddressId: theirs.id }));
      expect(foreign.errorCode).toBe('VALIDATION_ERROR');
      const notTheirs = await errorOf(wallet.editCard(other.id, second.id, { nickname: 'Mine' }));
      expect(notTheirs.errorCode).toBe('PAYMENT_METHOD_NOT_FOUND');
      expect(await wallet.findCard(second.id)).toMatchObject({ nickname: null, billingAddressId: office.id });
    });

    it('keeps an expired card from being the default, and a removed card from being edited', async () => {
      const { shopper, address } = await newShopper();
      const current = (await saveVisa(shopper.id, 321, address.id)).card;
      const old = (await saveVisa(shopper.id, 322, address.id)).card;
      await handle.db.kysely.updateTable('cards').set({ exp_year: 2001 }).where('id', '=', old.id).execute();

      const expired = await errorOf(wallet.editCard(shopper.id, old.id, { isDefault: true }));
      expect([expired.errorCode, expired.message]).toEqual([
        'PAYMENT_METHOD_EXPIRED',
        `isDefault: the Visa card ending in ${old.last4} has expired, so it cannot be the default card.`,
      ]);
      expect((await wallet.editCard(shopper.id, old.id, { nickname: 'Old' })).nickname).toBe('Old');
      expect((await wallet.findCard(current.id))?.isDefault).toBe(true);

      await wallet.removeCard(shopper.id, current.id);
      const removed = await errorOf(wallet.editCard(shopper.id, current.id, { nickname: 'Gone' }));
      expect(removed.errorCode).toBe('PAYMENT_METHOD_NOT_FOUND');
      expect((await wallet.findCard(current.id))?.nickname).toBeNull();
    });

    it('erases a shopper: cards out and their numbers scheduled, everything that names it emptied, no more writes', async () => {
      const { shopper, address } = await newShopper();
      const { card } = await saveVisa(shopper.id, 501, address.id);
      // Removed through a version before the erasure: never scheduled. And one whose number went.
      const { kysely } = handle.db;
      const unscheduled = (await saveVisa(shopper.id, 503, address.id)).card;
      const gone = (await saveVisa(shopper.id, 504, address.id)).card;
      for (const removed of [unscheduled, gone]) await wallet.removeCard(shopper.id, removed.id);
      await kysely
        .deleteFrom('vault_erasures')
        .where('vault_id', 'in', [unscheduled.vaultId, gone.vaultId])
        .execute();
      await kysely.updateTable('vault_cards').set({ erased_at: 1 }).where('id', '=', gone.vaultId).execute();

      const erased = await wallet.eraseShopper(shopper.id, TEST_ACTOR);
      expect(erased).toEqual({ cardsRemoved: 1, addressesEmptied: 1, sessionsEnded: 0 });
      expect(await wallet.findShopperByEmail(shopper.email)).toBeUndefined();
      expect(await wallet.getShopper(shopper.id)).toEqual({
        id: shopper.id,
        email: `erased:${shopper.id}`,
        phone: null,
        firstName: '',
        lastName: '',
      });
      expect(await wallet.findCard(card.id)).toMatchObject({ removedAt: expect.any(Number), nameOnCard: '' });
      expect(await wallet.findAddress(address.id)).toMatchObject({ address1: '', city: '', zip: '' });
      const scheduled = await kysely
        .selectFrom('vault_erasures')
        .select('vault_id')
        .where('vault_id', 'in', [card.vaultId, unscheduled.vaultId, gone.vaultId])
        .execute();
      expect(scheduled.map((entry) => entry.vault_id).sort()).toEqual(
        [card.vaultId, unscheduled.vaultId].sort(),
      );
      // A request that was under way when the wallet was erased adds nothing to it.
      for (const late of [
        () => wallet.addAddress(shopper.id, ADDRESS),
        () => saveVisa(shopper.id, 502, address.id),
      ]) {
        expect((await errorOf(late())).errorCode).toBe('SHOPPER_UNAUTHORIZED');
      }
      // The email is free for a new wallet.
      expect(
        (await wallet.createShopper({ email: shopper.email, firstName: 'A', lastName: 'L' })).id,
      ).not.toBe(shopper.id);
    });

    it('records each change made by someone in the audit trail, with the fields it changed, never their values', async () => {
      const { shopper, address } = await newShopper();
      const trail = new AuditTrail(handle.db);
      const by = { actor: `shopper:${shopper.id}` as const, details: { orderId: 'ord_1', proof: 'code' } };
      const second = await wallet.addAddress(shopper.id, { ...ADDRESS, address1: '2 Oak St' }, by);
      const edited = await wallet.editAddress(
        shopper.id,
        second.id,
        { zip: '78702', isDefaultShipping: true },
        by,
      );
      await wallet.editAddress(shopper.id, edited.id, { zip: '78702' }, by);
      const { card } = await wallet.saveCard(visaInput(shopper.id, 1, address.id), by);
      await wallet.saveCard({ ...visaInput(shopper.id, 1, address.id), expYear: FUTURE_YEAR + 1 }, by);
      await wallet.editCard(shopper.id, card.id, { nickname: 'Daily', nameOnCard: 'A. Lovelace' }, by);
      await wallet.removeCard(shopper.id, card.id, by);
      await wallet.removeCard(shopper.id, card.id, by);
      await wallet.removeAddress(shopper.id, edited.id, by);
      // Without anyone named (the sandbox's seed, an enrolment's first address): nothing recorded.
      await wallet.addAddress(shopper.id, ADDRESS);

      const events = await trail.list({ subject: shopper.id });
      const common = { actor: by.actor, subject: shopper.id, merchantId: null };
      expect(events.map(({ action, details }) => ({ action, details }))).toEqual([
        { action: 'wallet.address_added', details: { addressId: second.id, ...by.details } },
        {
          action: 'wallet.address_changed',
          details: {
            addressId: second.id,
            newAddressId: edited.id,
            fields: ['zip', 'isDefaultShipping'],
            ...by.details,
          },
        },
        { action: 'wallet.card_added', details: { paymentId: card.id, ...by.details } },
        { action: 'wallet.card_changed', details: { paymentId: card.id, renewed: true, ...by.details } },
        {
          action: 'wallet.card_changed',
          details: { paymentId: card.id, fields: ['nickName', 'nameOnCard'], ...by.details },
        },
        { action: 'wallet.card_removed', details: { paymentId: card.id, ...by.details } },
        { action: 'wallet.address_removed', details: { addressId: edited.id, ...by.details } },
      ]);
      for (const event of events) expect(event).toMatchObject(common);
      const recorded = JSON.stringify(events);
      for (const value of ['Oak', '78702', 'Daily', 'Lovelace', visaNumber(1)])
        expect(recorded).not.toContain(value);
      expect((await trail.verify()).ok).toBe(true);
    });

    it("keeps each merchant's first stored credential of a card, and shows it to that merchant only", async () => {
      const { shopper, address } = await newShopper();
      const card = await wallet.addCard({
        shopperId: shopper.id,
        pan: visaNumber(7),
        expMonth: 7,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        billingAddressId: address.id,
      });
      const [a, b] = [`mch_a${counter}`, `mch_b${counter}`];
      await insertMerchantRow(handle.db, a);
      await insertMerchantRow(handle.db, b);
      expect(await wallet.storedCredentialsIdentifier(card.id, a)).toBeNull();

      await wallet.recordStoredCredentialsIdentifier(card.id, a, '111111111111111');
      await wallet.recordStoredCredentialsIdentifier(card.id, a, '222222222222222');
      expect(await wallet.storedCredentialsIdentifier(card.id, a)).toBe('111111111111111');
      expect(await wallet.storedCredentialsIdentifier(card.id, b)).toBeNull();

      await wallet.recordStoredCredentialsIdentifier(card.id, b, '333333333333333');
      expect(await wallet.storedCredentialsIdentifier(card.id, b)).toBe('333333333333333');
      expect(await wallet.storedCredentialsIdentifier(card.id, a)).toBe('111111111111111');
    });

    it('treats a card as expired only after the last day of its expiry month (UTC)', async () => {
      const { shopper, address } = await newShopper();
      const card = await wallet.addCard({
        shopperId: shopper.id,
        pan: '4000000000000002',
        expMonth: 2,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Ada Lovelace',
        billingAddressId: address.id,
      });
      expect(wallet.isExpired(card, new Date(Date.UTC(FUTURE_YEAR, 1, 28, 23, 59, 59, 999)))).toBe(false);
      expect(wallet.isExpired(card, new Date(Date.UTC(FUTURE_YEAR, 2, 1)))).toBe(true);
      expect(wallet.isExpired({ ...card, expMonth: 12 }, new Date(Date.UTC(FUTURE_YEAR, 11, 31, 12)))).toBe(
        false,
      );
      expect(wallet.isExpired({ ...card, expMonth: 12 }, new Date(Date.UTC(FUTURE_YEAR + 1, 0, 1)))).toBe(
        true,
      );
    });
  });
});
