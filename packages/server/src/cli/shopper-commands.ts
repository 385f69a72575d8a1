/**
 * `shopper show|erase`: a shopper's data-subject requests. `show` answers a request for access (what the
 * wallet holds about them, never a card number); `erase` one for erasure.
 */
import { NotFoundError } from '../errors.js';
import { countShopperOrders } from '../orders/index.js';
import { PaymentsRepo } from '../payments/repo.js';
import { RateLimits } from '../rate-limits.js';
import { pendingNotices, rememberedDevices } from '../shopper-auth/index.js';
import { eraseShopper } from '../shopper-erasure.js';
import { CardVault } from '../vault/vault.js';
import { type Address, type Card, isErased, type Shopper, Wallet } from '../wallet/index.js';
import { type Command, defineCommand, UsageError } from './args.js';
import type { Context } from './context.js';
import { isoTime, jsonTime, table, toJson } from './output.js';

function walletOf(context: Context): { wallet: Wallet; vault: CardVault } {
  const vault = new CardVault(context.db, context.keyRing);
  return { wallet: new Wallet(context.db, vault), vault };
}

/** A shopper's id as the audit trail, the log and `order show` name them. */
const SHOPPER_ID = /^shp_[0-9A-Za-z]+$/;

/**
 * The shopper an email or a shopper id names. The id also finds an erased shopper, whose email is gone:
 * to finish an erasure cut short, or to replay one after a restore.
 */
async function requireShopper(wallet: Wallet, emailOrId: string): Promise<Shopper> {
  if (SHOPPER_ID.test(emailOrId)) {
    return wallet.getShopper(emailOrId).catch((error: unknown) => {
      throw error instanceof NotFoundError
        ? new NotFoundError('SHOPPER_NOT_FOUND', 'no shopper has that id')
        : error;
    });
  }
  const shopper = await wallet.findShopperByEmail(emailOrId);
  if (!shopper) throw new NotFoundError('SHOPPER_NOT_FOUND', 'no shopper has that email');
  return shopper;
}

function addressLine(address: Address): string {
  const defaults = [
    address.isDefaultBilling ? 'default billing' : '',
    address.isDefaultShipping ? 'default shipping' : '',
  ].filter(Boolean);
  const place = [address.address1, address.address2, address.city, `${address.state} ${address.zip}`]
    .filter(Boolean)
    .join(', ');
  const who = [`${address.firstName} ${address.lastName}`, address.company].filter(Boolean).join(', ');
  const notes = address.removedAt === null ? defaults : [`removed ${isoTime(address.removedAt)}`];
  return `${who}: ${place}, ${address.country}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}

/**
 * The merchants that received the shopper's data: the orders it paid (or tried to) with each, by status,
 * and the credentials webhooks, each with card data, sent for its cards.
 */
async function merchantsOf(context: Context, shopperId: string, cards: Card[]) {
  const [orders, requests] = await Promise.all([
    countShopperOrders(context.db.kysely, shopperId),
    new PaymentsRepo(context.db).countByCards(cards.map((card) => card.id)),
  ]);
  const ids = [...new Set([...orders, ...requests].map((row) => row.merchantId))].sort();
  return Promise.all(
    ids.map(async (merchantId) => ({
      merchantId,
      name: (await context.merchants.get(merchantId))?.name ?? '(deleted)',
      credentialsRequests: requests.find((row) => row.merchantId === merchantId)?.count ?? 0,
      orders: Object.fromEntries(
        orders.filter((row) => row.merchantId === merchantId).map((row) => [row.status, row.count]),
      ),
    })),
  );
}

/** Events of the audit trail `shopper show` lists: a support call's worth. */
const ACTIVITY_SHOWN = 20;

const shopperShow = defineCommand<string>({
  name: 'shopper show',
  summary: 'Show what the wallet holds about a shopper, for a request for access (never a card number).',
  positionals: ['email-or-shopper-id'],
  details: [
    'Lists the profile, the devices that remember the shopper, and every address and card saved, removed',
    "ones included, with when a card's number was erased from the vault, and the merchants that received",
    'its data: the orders paid (or tried) with each, and the credentials webhooks that carried its card;',
    `then the latest ${ACTIVITY_SHOWN} events about the shopper in the audit trail: their wallet's changes and`,
    'devices, and who viewed them (all of them: `audit list --subject <shopper id>`).',
  ],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, email) {
    const { wallet, vault } = walletOf(context);
    const shopper = await requireShopper(wallet, email);
    await context.audit.record({ actor: context.actor, action: 'shopper.viewed', subject: shopper.id });
    const { addresses, cards, liveSessions } = await wallet.holdings(shopper.id);
    const erased = await vault.erasedAt(cards.map((card) => card.vaultId));
    const merchants = await merchantsOf(context, shopper.id, cards);
    const activity = await context.audit.list({ subject: shopper.id, limit: ACTIVITY_SHOWN });
    const emails = (await pendingNotices(context.db, shopper.id)).map((notice) => ({
      kind: notice.kind,
      writtenAt: jsonTime(notice.createdAt),
      attempts: notice.attempts,
      nextAttemptAt: jsonTime(notice.nextAttemptAt),
      lastError: notice.lastError,
    }));
    const devices = (await rememberedDevices(context.db, shopper.id)).map((device) => ({
      rememberedAt: jsonTime(device.createdAt),
      expiresAt: jsonTime(device.expiresAt),
      lastUsedAt: jsonTime(device.lastUsedAt),
    }));
    const cardViews = cards.map((card) => ({
      paymentId: card.id,
      brand: card.brand,
      last4: card.last4,
      expMonth: card.expMonth,
      expYear: card.expYear,
      nameOnCard: card.nameOnCard,
      nickname: card.nickname,
      isDefault: card.isDefault,
      removedAt: jsonTime(card.removedAt),
      numberErasedAt: jsonTime(erased.get(card.vaultId) ?? null),
    }));
    const text = [
      `shopper:  ${shopper.id}`,
      `email:    ${shopper.email}`,
      `name:     ${shopper.firstName} ${shopper.lastName}`,
      `phone:    ${shopper.phone ?? '(none)'}`,
      `sessions: ${liveSessions} live`,
      `devices:  ${devices.length} remembered${devices.map((device) => `; since ${device.rememberedAt}, last used ${device.lastUsedAt ?? 'never'}`).join('')}`,
      `e-mails:  ${emails.length} waiting to be sent${emails.map((email) => `; ${email.kind} of ${email.writtenAt}, ${email.attempts} attempt(s), next ${email.nextAttemptAt}${email.lastError ? ` (last: ${email.lastError})` : ''}`).join('')}`,
      '',
      `Addresses (${addresses.length}):`,
      ...addresses.map((address) => `  ${addressLine(address)}`),
      '',
      `Cards (${cards.length}):`,
      table(
        ['  card', 'expires', 'name on card', 'state'],
        cardViews.map((card) => [
          `  ${card.brand} ending ${card.last4}`,
          `${String(card.expMonth).padStart(2, '0')}/${card.expYear}`,
          card.nameOnCard,
          card.removedAt === null
            ? `in the wallet${card.isDefault ? ' (default)' : ''}`
            : `removed ${card.removedAt}; number ${card.numberErasedAt ? `erased ${card.numberErasedAt}` : 'to be erased'}`,
        ]),
      ),
      '',
      `Merchants it paid or sent card data to (${merchants.length}):`,
      ...merchants.map(
        (merchant) =>
          `  ${merchant.name} (${merchant.merchantId}): ${merchant.credentialsRequests} credentials webhooks; orders: ${
            Object.entries(merchant.orders)
              .map(([status, count]) => `${count} ${status}`)
              .join(', ') || 'none'
          }`,
      ),
      '',
      `Activity (the latest ${activity.length}, oldest first):`,
      ...activity.map(
        (event) => `  ${isoTime(event.at)}  ${event.action}  ${event.actor}  ${toJson(event.details)}`,
      ),
    ].join('\n');
    context.print(text, {
      shopperId: shopper.id,
      email: shopper.email,
      firstName: shopper.firstName,
      lastName: shopper.lastName,
      phone: shopper.phone,
      liveSessions,
      devices,
      emails,
      addresses: addresses.map((address) => ({
        ...address,
        removedAt: jsonTime(address.removedAt),
      })),
      cards: cardViews,
      merchants,
      activity: activity.map(({ seq, at, actor, action, details }) => ({
        seq,
        at: jsonTime(at),
        actor,
        action,
        details,
      })),
    });
    return 0;
  },
});

const shopperErase = defineCommand<string>({
  name: 'shopper erase',
  summary: "Erase a shopper's wallet, for a request for erasure; it cannot be undone.",
  positionals: ['email-or-shopper-id'],
  options: { yes: { type: 'boolean', description: 'confirm the erasure (required)' } },
  details: [
    'Every card leaves the wallet and its number is erased from the vault an hour later (as when the',
    'shopper removes it); the name, email and phone, the names on the cards and every address are',
    'emptied; open checkouts are signed out, devices that remember the shopper forget them, e-mails not',
    'yet sent to them are deleted, and payment-carousel sessions end. The email is free for a new wallet.',
    'A credentials webhook already acknowledged is still delivered, with the card and the emptied address.',
    'Orders stay with the merchants they were made for.',
  ],
  prepare({ values, positionals }) {
    if (values.yes !== true) {
      throw new UsageError('erasing a shopper cannot be undone: add --yes to confirm', 'shopper erase');
    }
    return positionals[0] as string;
  },
  async execute(context, email) {
    const { wallet } = walletOf(context);
    const shopper = await requireShopper(wallet, email);
    if (isErased(shopper)) {
      context.print(`Shopper ${shopper.id} was erased already: nothing to do.`, {
        shopperId: shopper.id,
        alreadyErased: true,
      });
      return 0;
    }
    const limits = new RateLimits(context.db);
    const erased = await eraseShopper({ db: context.db, limits, wallet }, shopper, context.actor);
    context.print(
      `Erased shopper ${shopper.id}: ${erased.cardsRemoved} cards taken out of the wallet (their numbers are erased from the vault within the hour), ${erased.addressesEmptied} addresses emptied, ${erased.sessionsEnded} sessions ended, ${erased.signInsDeleted} sign-in records deleted.`,
      { shopperId: shopper.id, ...erased },
    );
    return 0;
  },
});

export const SHOPPER_COMMANDS: Command[] = [shopperShow, shopperErase];
