import type { Insertable, Transaction } from 'kysely';
import { type Actor, type AuditAction, type AuditDetails, recordAudit } from '../audit/index.js';
import type { Database, Db } from '../db/index.js';
import type { AddressesTable } from '../db/schema.js';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import { newId, newUuid } from '../ids.js';
import { scheduleErasure } from '../vault/erasure.js';
import { type CardVault, cardNetwork, validatePan } from '../vault/vault.js';
import * as repo from './repo.js';
import type { Address, Card, Shopper } from './types.js';

/**
 * Who changes a wallet, and where: recorded in the audit trail with the change, in its transaction.
 * `details` (the checkout's order, what signed the shopper in) go with every event; never a value of
 * the wallet, as the trail outlives the shopper's erasure.
 */
export interface ChangedBy {
  actor: Actor;
  details?: AuditDetails;
}

/** The change's event, when someone is named for it; the shopper is its subject. */
async function recordChange(
  trx: Transaction<Database>,
  shopperId: string,
  by: ChangedBy | undefined,
  action: AuditAction,
  details: AuditDetails,
): Promise<void> {
  if (!by) return;
  const event = { actor: by.actor, action, subject: shopperId, details: { ...details, ...by.details } };
  await recordAudit(trx, event, Date.now());
}

export interface NewShopper {
  email: string;
  phone?: string | null;
  firstName: string;
  lastName: string;
}

export interface NewAddress {
  firstName: string;
  lastName: string;
  company?: string | null;
  address1: string;
  address2?: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  phoneNumber?: string | null;
  /** Defaults to true for the shopper's first address. */
  isDefaultBilling?: boolean;
  /** Defaults to true for the shopper's first address. */
  isDefaultShipping?: boolean;
}

/** The fields of an address a shopper can change; a default can be taken, not given away. */
export type AddressChanges = Partial<Omit<NewAddress, 'isDefaultBilling' | 'isDefaultShipping'>> & {
  isDefaultBilling?: true;
  isDefaultShipping?: true;
};

/** What a shopper can change of a saved card: its number and expiry are the card's own. */
export interface CardChanges {
  nickname?: string | null;
  nameOnCard?: string;
  billingAddressId?: number;
  isDefault?: true;
}

/** The fields of an address, as an edit can change them. */
const ADDRESS_FIELDS = new Set<string>([
  'firstName',
  'lastName',
  'company',
  'address1',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'phoneNumber',
]);

/** The row of a new address in the wallet, with its defaults. */
function addressRow(
  shopperId: string,
  address: Omit<NewAddress, 'isDefaultBilling' | 'isDefaultShipping'>,
  defaults: { billing: boolean; shipping: boolean },
  now: number,
): Insertable<AddressesTable> {
  return {
    external_id: newUuid(),
    shopper_id: shopperId,
    first_name: address.firstName,
    last_name: address.lastName,
    company: address.company ?? null,
    address1: address.address1,
    address2: address.address2 ?? null,
    city: address.city,
    state: address.state,
    zip: address.zip,
    country: address.country,
    phone_number: address.phoneNumber ?? null,
    is_default_billing: defaults.billing ? 1 : 0,
    is_default_shipping: defaults.shipping ? 1 : 0,
    created_at: now,
    removed_at: null,
  };
}

export interface NewCard {
  shopperId: string;
  /** Digits; spaces and dashes as a shopper types them are ignored. */
  pan: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
  nameOnCard: string;
  nickname?: string | null;
  billingAddressId: number;
  /** The shopper's first card is the default whatever this says. */
  isDefault?: boolean;
  needsCvv?: boolean;
}

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function brandOf(pan: string): string {
  const network = cardNetwork(pan);
  if (!network) throw new ValidationError('pan: the card network is not recognised');
  return network;
}

function validateCard(input: NewCard, now: Date): void {
  if (!Number.isInteger(input.expMonth) || input.expMonth < 1 || input.expMonth > 12) {
    throw new ValidationError('expMonth: must be an integer from 1 to 12');
  }
  if (!Number.isInteger(input.expYear) || input.expYear < 1000 || input.expYear > 9999) {
    throw new ValidationError('expYear: must be a four-digit year');
  }
  if (isExpired(input, now)) throw new ValidationError('expMonth/expYear: the card has expired');
  if (!input.nameOnCard.trim()) throw new ValidationError('nameOnCard: must not be empty');
}

/** A card is good through the last day of its expiry month, here taken as ending at midnight UTC. */
function isExpired(card: { expMonth: number; expYear: number }, now: Date): boolean {
  // Date.UTC counts months from 0, so `expMonth` (1-12) names the month after expiry.
  return now.getTime() >= Date.UTC(card.expYear, card.expMonth, 1);
}

/** The most cards one wallet holds. */
export const MAX_CARDS = 20;

/** The most addresses one wallet holds. */
export const MAX_ADDRESSES = 20;

/**
 * The card back in the wallet if it was removed, with a later expiry and the name and billing address
 * given now; with `isDefault`, the default card.
 */
async function renewCard(trx: repo.Q, card: Card, input: NewCard, isDefault: boolean): Promise<Card> {
  const later = input.expYear * 12 + input.expMonth > card.expYear * 12 + card.expMonth;
  if (isDefault) await repo.clearDefaultCard(trx, card.shopperId);
  await repo.updateCard(trx, card.id, {
    ...(later ? { exp_month: input.expMonth, exp_year: input.expYear } : {}),
    name_on_card: input.nameOnCard,
    billing_address_id: input.billingAddressId,
    removed_at: null,
    ...(isDefault ? { is_default: 1 } : {}),
  });
  return mustFindCard(trx, card.id);
}

/** The network as a sentence names it: `visa` → `Visa`. */
const titled = (brand: string): string => brand.charAt(0).toUpperCase() + brand.slice(1);

/** Takes a card out of its wallet at `now`, and schedules the erasure of its number. */
async function takeOut(trx: repo.Q, card: Card, now: number): Promise<void> {
  await repo.updateCard(trx, card.id, { removed_at: now, is_default: 0 });
  await scheduleErasure(trx, card.vaultId, now);
}

/** The values `changes` gives the address other than those it has: none when it changes only defaults. */
export function addressEdits(address: Address, changes: AddressChanges): Partial<Address> {
  return Object.fromEntries(
    Object.entries(changes).filter(
      ([field, value]) =>
        ADDRESS_FIELDS.has(field) && value !== undefined && address[field as keyof Address] !== value,
    ),
  ) as Partial<Address>;
}

/** The address with that id in the shopper's wallet, else ADDRESS_NOT_FOUND; with `removed`, a removed one too. */
async function addressInWallet(
  trx: repo.Q,
  shopperId: string,
  addressId: number,
  options: { removed?: boolean } = {},
): Promise<Address> {
  const address = await repo.findAddress(trx, addressId);
  if (address?.shopperId !== shopperId || (address.removedAt !== null && !options.removed)) {
    throw new NotFoundError(
      'ADDRESS_NOT_FOUND',
      `addressId: no address ${addressId} in the shopper's wallet.`,
    );
  }
  return address;
}

/** The card with that id in the shopper's wallet, else PAYMENT_METHOD_NOT_FOUND; with `removed`, a removed one too. */
async function cardInWallet(
  trx: repo.Q,
  shopperId: string,
  cardId: string,
  options: { removed?: boolean } = {},
): Promise<Card> {
  const card = await repo.findCard(trx, cardId);
  if (card?.shopperId !== shopperId || (card.removedAt !== null && !options.removed)) {
    throw new NotFoundError(
      'PAYMENT_METHOD_NOT_FOUND',
      `paymentId: no card ${cardId} in the shopper's wallet.`,
    );
  }
  return card;
}

/** A card's columns as the checkout's API names them, for the audit trail. */
const CARD_FIELDS = {
  nickname: 'nickName',
  name_on_card: 'nameOnCard',
  billing_address_id: 'billingAddressId',
  is_default: 'isDefault',
} as const;

/** Makes the address the shopper's default of each kind `changes` asks for; the defaults it took. */
async function takeDefaults(trx: repo.Q, address: Address, changes: AddressChanges): Promise<string[]> {
  const taken: string[] = [];
  if (changes.isDefaultBilling && !address.isDefaultBilling) {
    await repo.clearDefaultAddress(trx, address.shopperId, 'is_default_billing');
    await repo.updateAddress(trx, address.id, { is_default_billing: 1 });
    taken.push('isDefaultBilling');
  }
  if (changes.isDefaultShipping && !address.isDefaultShipping) {
    await repo.clearDefaultAddress(trx, address.shopperId, 'is_default_shipping');
    await repo.updateAddress(trx, address.id, { is_default_shipping: 1 });
    taken.push('isDefaultShipping');
  }
  return taken;
}

async function mustFindCard(trx: repo.Q, id: string): Promise<Card> {
  const card = await repo.findCard(trx, id);
  if (!card) throw new Error(`card ${id} vanished while being saved`);
  return card;
}

/** Shoppers, their addresses and their saved cards. Card numbers go to the vault; the wallet keeps a reference. */
export class Wallet {
  readonly #reads: repo.KeyReads;

  constructor(
    private readonly db: Db,
    private readonly vault: CardVault,
  ) {
    this.#reads = repo.keyReads(db);
  }

  /** Case-insensitive; surrounding spaces are ignored. */
  findShopperByEmail(email: string): Promise<Shopper | undefined> {
    return repo.findShopperByEmail(this.db.kysely, normalizeEmail(email));
  }

  async getShopper(id: string): Promise<Shopper> {
    const shopper = await repo.findShopper(this.db.kysely, id);
    if (!shopper) throw new NotFoundError('SHOPPER_NOT_FOUND', 'No shopper with that id.');
    return shopper;
  }

  async createShopper(input: NewShopper): Promise<Shopper> {
    const email = input.email.trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new ValidationError('email: must be an email address');
    const shopper: Shopper = {
      id: newId('shopper'),
      email,
      phone: input.phone ?? null,
      firstName: input.firstName,
      lastName: input.lastName,
    };
    const inserted = await repo.insertShopper(this.db.kysely, {
      id: shopper.id,
      email,
      email_normalized: normalizeEmail(email),
      phone: shopper.phone,
      first_name: shopper.firstName,
      last_name: shopper.lastName,
      created_at: Date.now(),
    });
    if (!inserted) {
      throw new DomainError('SHOPPER_ALREADY_EXISTS', 'email: a shopper with this email already exists');
    }
    return shopper;
  }

  /**
   * Making an address a default takes that default away from the shopper's other addresses. Addresses
   * saved at the same moment leave one default of each kind. A wallet holds at most MAX_ADDRESSES.
   */
  async addAddress(shopperId: string, input: NewAddress, by?: ChangedBy): Promise<Address> {
    await this.getShopper(shopperId);
    return this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const count = await repo.countAddresses(trx, shopperId);
      if (count >= MAX_ADDRESSES) {
        throw new DomainError(
          'WALLET_FULL',
          `The wallet already holds ${MAX_ADDRESSES} addresses, the most it can; remove one first.`,
        );
      }
      const first = count === 0;
      const isDefaultBilling = input.isDefaultBilling ?? first;
      const isDefaultShipping = input.isDefaultShipping ?? first;
      if (isDefaultBilling) await repo.clearDefaultAddress(trx, shopperId, 'is_default_billing');
      if (isDefaultShipping) await repo.clearDefaultAddress(trx, shopperId, 'is_default_shipping');
      const address = await repo.insertAddress(
        trx,
        addressRow(shopperId, input, { billing: isDefaultBilling, shipping: isDefaultShipping }, Date.now()),
      );
      await recordChange(trx, shopperId, by, 'wallet.address_added', { addressId: address.id });
      return address;
    });
  }

  /**
   * Takes an address out of the wallet: it is no longer listed, and new payments and cards refuse it,
   * while cards and orders that name it still read it. The billing address of a card in the wallet
   * stays (`ADDRESS_IN_USE`): that card is saved again with another one, or removed, first. A default
   * passes to the newest address left. Removing a removed address changes nothing.
   */
  async removeAddress(shopperId: string, addressId: number, by?: ChangedBy): Promise<void> {
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const address = await addressInWallet(trx, shopperId, addressId, { removed: true });
      if (address.removedAt !== null) return;
      const user = (await repo.listCards(trx, shopperId)).find((card) => card.billingAddressId === addressId);
      if (user) {
        throw new DomainError(
          'ADDRESS_IN_USE',
          `The address is the billing address of the ${titled(user.brand)} card ending in ${user.last4}: add that card again with another billing address, or remove it, first.`,
        );
      }
      await repo.updateAddress(trx, addressId, {
        removed_at: Date.now(),
        is_default_billing: 0,
        is_default_shipping: 0,
      });
      await recordChange(trx, shopperId, by, 'wallet.address_removed', { addressId });
      const [newest] = (await repo.listAddresses(trx, shopperId)).sort((a, b) => b.id - a.id);
      if (!newest) return;
      if (address.isDefaultBilling) {
        await repo.updateAddress(trx, newest.id, { is_default_billing: 1 });
      }
      if (address.isDefaultShipping) {
        await repo.updateAddress(trx, newest.id, { is_default_shipping: 1 });
      }
    });
  }

  /**
   * Changes an address in the wallet. Orders made with it go on showing it as it was, so new values make
   * a new address (a new `id` and `externalId`) that takes the old one's place: its defaults, and the
   * cards it is the billing address of. The old one is removed. Values that change nothing leave the
   * address as it is, and so does asking for a default it already is. A default can only be taken:
   * making another address the default takes it from this one. Answers the address as it is now.
   */
  async editAddress(
    shopperId: string,
    addressId: number,
    changes: AddressChanges,
    by?: ChangedBy,
  ): Promise<Address> {
    return this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const address = await addressInWallet(trx, shopperId, addressId);
      const edits = addressEdits(address, changes);
      let current = address;
      if (Object.keys(edits).length > 0) {
        const now = Date.now();
        await repo.updateAddress(trx, address.id, {
          removed_at: now,
          is_default_billing: 0,
          is_default_shipping: 0,
        });
        const defaults = { billing: address.isDefaultBilling, shipping: address.isDefaultShipping };
        current = await repo.insertAddress(
          trx,
          addressRow(shopperId, { ...address, ...edits }, defaults, now),
        );
        await repo.moveBillingAddress(trx, shopperId, address.id, current.id);
      }
      const defaults = await takeDefaults(trx, current, changes);
      const fields = Object.keys(edits);
      if (fields.length > 0 || defaults.length > 0) {
        await recordChange(trx, shopperId, by, 'wallet.address_changed', {
          addressId,
          ...(current.id !== addressId ? { newAddressId: current.id } : {}),
          fields: [...fields, ...defaults],
        });
      }
      return addressInWallet(trx, shopperId, current.id);
    });
  }

  /** Defaults first, then newest; with `removed`, the removed ones too. */
  listAddresses(shopperId: string, options: { removed?: boolean } = {}): Promise<Address[]> {
    return repo.listAddresses(this.db.kysely, shopperId, options);
  }

  findAddress(id: number): Promise<Address | undefined> {
    return this.#reads.address(id);
  }

  /**
   * Saves a card: the number into the vault, the rest into the wallet. The same number saved twice by
   * one shopper returns the card saved the first time, unchanged.
   */
  async addCard(input: NewCard, by?: ChangedBy): Promise<Card> {
    return (await this.#save(input, false, by)).card;
  }

  /**
   * Saves a card a signed-in shopper typed in. A number already in the wallet renews that card instead
   * of adding another: a reissued card keeps its number, so the later expiry wins, and the name and the
   * billing address become the ones given now. `created` says whether the card is new to the wallet
   * (a removed card typed again is).
   */
  saveCard(input: NewCard, by?: ChangedBy): Promise<{ card: Card; created: boolean }> {
    return this.#save(input, true, by);
  }

  /**
   * A new card is the default when asked, or when the wallet has no default that can still pay (none
   * yet, or an expired one); cards saved at the same moment leave one default. A wallet holds at most
   * MAX_CARDS cards.
   */
  async #save(input: NewCard, renew: boolean, by?: ChangedBy): Promise<{ card: Card; created: boolean }> {
    const pan = input.pan.replace(/[\s-]/g, '');
    validatePan(pan);
    const now = new Date();
    validateCard(input, now);
    const brand = brandOf(pan);
    await this.getShopper(input.shopperId);
    return this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, input.shopperId);
      // Within the lock: an address removed meanwhile is no billing address.
      const billing = await repo.findAddress(trx, input.billingAddressId);
      if (billing?.shopperId !== input.shopperId || billing.removedAt !== null) {
        throw new ValidationError("billingAddressId: no such address in the shopper's wallet");
      }
      const vaultId = await this.vault.store(trx, pan);
      const existing = await repo.findCardByVaultId(trx, input.shopperId, vaultId);
      if (existing && !renew) return { card: existing, created: false };
      const cards = await repo.listCards(trx, input.shopperId);
      // A removed card typed again comes back into the wallet, as a new card would.
      const added = !existing || existing.removedAt !== null;
      if (added && cards.length >= MAX_CARDS) {
        throw new DomainError(
          'WALLET_FULL',
          `The wallet already holds ${MAX_CARDS} cards, the most it can; pay with one of them.`,
        );
      }
      const isDefault =
        input.isDefault === true ||
        !cards.some((card) => card.isDefault && card.id !== existing?.id && !isExpired(card, now));
      if (existing) {
        const card = await renewCard(trx, existing, input, isDefault);
        const action = added ? 'wallet.card_added' : 'wallet.card_changed';
        await recordChange(trx, input.shopperId, by, action, { paymentId: card.id, renewed: true });
        return { card, created: added };
      }
      if (isDefault) await repo.clearDefaultCard(trx, input.shopperId);
      const id = newUuid();
      await repo.insertCard(trx, {
        id,
        shopper_id: input.shopperId,
        vault_id: vaultId,
        billing_address_id: input.billingAddressId,
        brand,
        last4: pan.slice(-4),
        exp_month: input.expMonth,
        exp_year: input.expYear,
        name_on_card: input.nameOnCard,
        nickname: input.nickname ?? null,
        is_default: isDefault ? 1 : 0,
        needs_cvv: input.needsCvv ? 1 : 0,
        created_at: Date.now(),
      });
      await recordChange(trx, input.shopperId, by, 'wallet.card_added', { paymentId: id });
      return { card: await mustFindCard(trx, id), created: true };
    });
  }

  /**
   * Takes a card out of the wallet: it is no longer listed, and new payments and credentials requests
   * refuse it, while those under way still reach its number. Removing the default makes the newest card
   * that can still pay the default. Removing a removed card changes nothing; typing its number again
   * brings it back. An hour on, the number is erased from the vault unless another wallet holds it
   * (vault/erasure.ts); typed after that, it is a new card.
   */
  async removeCard(shopperId: string, cardId: string, by?: ChangedBy): Promise<void> {
    const now = new Date();
    await this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const card = await cardInWallet(trx, shopperId, cardId, { removed: true });
      if (card.removedAt !== null) return;
      await takeOut(trx, card, now.getTime());
      await recordChange(trx, shopperId, by, 'wallet.card_removed', { paymentId: cardId });
      if (!card.isDefault) return;
      // Newest first, now that none is the default.
      const next = (await repo.listCards(trx, shopperId)).find((other) => !isExpired(other, now));
      if (next) await repo.updateCard(trx, next.id, { is_default: 1 });
    });
  }

  /**
   * Changes a card's nickname, name on card or billing address, or makes it the default, in place: the
   * card's number and expiry change only by typing the card again (saveCard). An expired card cannot be
   * the default (`PAYMENT_METHOD_EXPIRED`). Answers the card as it is now.
   */
  async editCard(shopperId: string, cardId: string, changes: CardChanges, by?: ChangedBy): Promise<Card> {
    const now = new Date();
    if (changes.nameOnCard !== undefined && !changes.nameOnCard.trim()) {
      throw new ValidationError('nameOnCard: must not be empty');
    }
    return this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const card = await cardInWallet(trx, shopperId, cardId);
      if (changes.billingAddressId !== undefined) {
        await addressInWallet(trx, shopperId, changes.billingAddressId).catch(() => {
          throw new ValidationError("billingAddressId: no such address in the shopper's wallet");
        });
      }
      const isDefault = changes.isDefault === true && !card.isDefault;
      if (isDefault && isExpired(card, now)) {
        throw new DomainError(
          'PAYMENT_METHOD_EXPIRED',
          `isDefault: the ${titled(card.brand)} card ending in ${card.last4} has expired, so it cannot be the default card.`,
        );
      }
      if (isDefault) await repo.clearDefaultCard(trx, shopperId);
      const update = {
        ...(changes.nickname !== undefined ? { nickname: changes.nickname } : {}),
        ...(changes.nameOnCard !== undefined ? { name_on_card: changes.nameOnCard.trim() } : {}),
        ...(changes.billingAddressId !== undefined ? { billing_address_id: changes.billingAddressId } : {}),
        ...(isDefault ? { is_default: 1 } : {}),
      };
      if (Object.keys(update).length > 0) {
        await repo.updateCard(trx, card.id, update);
        const fields = Object.keys(update).map((column) => CARD_FIELDS[column as keyof typeof update]);
        await recordChange(trx, shopperId, by, 'wallet.card_changed', { paymentId: card.id, fields });
      }
      return mustFindCard(trx, card.id);
    });
  }

  /**
   * Erases a shopper at their request (`wallet-checkout shopper erase`): every card leaves the wallet, its
   * number erased from the vault an hour later as for a removal (cards removed before included); the shopper's name, email and phone, the
   * names on the cards and every address are emptied; the payment-carousel sessions end. The rows stay,
   * emptied, because orders and credentials requests refer to them; the email is free for a new wallet.
   */
  async eraseShopper(
    shopperId: string,
    by: Actor,
  ): Promise<{ cardsRemoved: number; addressesEmptied: number; sessionsEnded: number }> {
    const now = Date.now();
    return this.db.kysely.transaction().execute(async (trx) => {
      await repo.lockShopper(trx, this.db.engine, shopperId);
      const cards = await repo.listAllCards(trx, shopperId);
      const inWallet = cards.filter((card) => card.removedAt === null);
      for (const card of inWallet) await takeOut(trx, card, now);
      // Removed before, its number may still wait for its erasure, or never have been scheduled.
      for (const card of cards) if (card.removedAt !== null) await scheduleErasure(trx, card.vaultId, now);
      const addressesEmptied = await repo.blankShopper(trx, shopperId);
      const sessionsEnded = await repo.endSessions(trx, shopperId, now);
      const erased = { cardsRemoved: inWallet.length, addressesEmptied, sessionsEnded };
      // The shopper's id only: the email it names is what was just erased.
      await recordAudit(
        trx,
        { actor: by, action: 'shopper.erased', subject: shopperId, details: erased },
        now,
      );
      return erased;
    });
  }

  /** What the wallet holds about a shopper, removed cards included (`wallet-checkout shopper show`). */
  async holdings(shopperId: string): Promise<{ addresses: Address[]; cards: Card[]; liveSessions: number }> {
    const { kysely } = this.db;
    const [addresses, cards, liveSessions] = await Promise.all([
      repo.listAddresses(kysely, shopperId, { removed: true }),
      repo.listAllCards(kysely, shopperId),
      repo.countLiveSessions(kysely, shopperId, Date.now()),
    ]);
    return { addresses, cards, liveSessions };
  }

  /** Default first, then newest. */
  listCards(shopperId: string): Promise<Card[]> {
    return repo.listCards(this.db.kysely, shopperId);
  }

  findCard(id: string): Promise<Card | undefined> {
    return this.#reads.card(id);
  }

  isExpired(card: Card, now: Date): boolean {
    return isExpired(card, now);
  }

  /**
   * Records the network transaction id of a card's first successful payment at a merchant, which the
   * card's later payments there name as the stored credential. Card networks agree a stored credential
   * between a card and one merchant, so each merchant has its own. Only the first one counts: a card that
   * has one at the merchant keeps it.
   */
  async recordStoredCredentialsIdentifier(
    cardId: string,
    merchantId: string,
    identifier: string,
  ): Promise<void> {
    await repo.insertStoredCredential(this.db.kysely, {
      card_id: cardId,
      merchant_id: merchantId,
      network_transaction_id: identifier,
      created_at: Date.now(),
    });
  }

  /**
   * The stored credential a card's payments at a merchant name (recordStoredCredentialsIdentifier): the
   * network transaction id of its first successful payment there; null before it, whatever other
   * merchants it paid.
   */
  storedCredentialsIdentifier(cardId: string, merchantId: string): Promise<string | null> {
    return repo.findStoredCredential(this.db.kysely, cardId, merchantId);
  }
}
