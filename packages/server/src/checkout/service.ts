/**
 * The hosted checkout's use cases, one service over the faces of orders, merchants, shopper sign-in,
 * the wallet and the payment step: what the checkout page's API (`api/checkout/`) calls.
 */
import { SERVICE_ACTOR, shopperActor } from '../audit/index.js';
import type { Db } from '../db/index.js';
import { DomainError, ValidationError } from '../errors.js';
import type { GatewayAccounts } from '../gateways/index.js';
import type { Logger } from '../log.js';
import type { AuthorizationMode, Merchant, ShippingMethod, Variant } from '../merchants/index.js';
import type { LineItem, OrderState, Orders } from '../orders/index.js';
import type { RateLimits } from '../rate-limits.js';
import type {
  CodeRequestResult,
  DeviceGrant,
  ShopperAuth,
  ShopperIdentity,
  ShopperTokenGrant,
} from '../shopper-auth/index.js';
import { eraseShopper } from '../shopper-erasure.js';
import type { KeyRing } from '../vault/keyring.js';
import type { CardVault } from '../vault/vault.js';
import {
  type AddressChanges,
  addressEdits,
  type CardChanges,
  type NewAddress,
  type Sessions,
  type Wallet,
} from '../wallet/index.js';
import {
  changedBy,
  chargedTotal,
  chooseShipping,
  findMerchant,
  findOpenOrder,
  findOrder,
  panAs,
  type ShippingChoice,
  shopperAddress,
} from './common.js';
import { type EnrolInput, Enrolments } from './enrolment.js';
import { type PayInput, PaymentStep } from './payment.js';
import { type PayResult, type WalletAddress, type WalletCard, walletAddress, walletCard } from './shapes.js';
import { taxesFor } from './taxes.js';

/** What a sign-in from a remembered device may not do without a one-time code. */
type CodeAction = 'delete-wallet' | 'address';

const CODE_REQUIRED_FOR: Record<CodeAction, string> = {
  'delete-wallet':
    'deleting the wallet needs a one-time code. Ask for a code, sign in with it, and delete again.',
  address:
    'a new or changed address needs a one-time code. Ask for a code, sign in with it, and save it again.',
};

/**
 * The identity's shopper if a one-time code signed them in; else `403 CODE_REQUIRED` saying for what. A
 * remembered device is not proof enough where someone else may be using it: to delete the wallet, which
 * cannot be undone, or to save an address, where whoever holds the device could have the wallet's cards
 * pay for goods sent to them.
 */
function requireCode(identity: ShopperIdentity, action: CodeAction): string {
  if (identity.proof !== 'code') {
    throw new DomainError(
      'CODE_REQUIRED',
      `This sign-in came from a remembered device; ${CODE_REQUIRED_FOR[action]}`,
    );
  }
  return identity.shopperId;
}

export interface CheckoutDeps {
  db: Db;
  keyRing: KeyRing;
  log: Logger;
  orders: Orders;
  merchants: { get(id: string): Promise<Merchant | undefined> };
  wallet: Wallet;
  sessions: Sessions;
  vault: CardVault;
  gateways: GatewayAccounts;
  shopperAuth: ShopperAuth;
  /** Shared counters: a deleted wallet's counts of codes sent to its email go with it. */
  limits: Pick<RateLimits, 'forget' | 'forgetPrefix'>;
  sessionTtlSeconds: number;
  now?: () => number;
}

export interface OrderSummary {
  orderId: string;
  status: OrderState;
  merchantName: string;
  variant: Variant;
  authorizationMode: AuthorizationMode;
  currency: string;
  lineItems: LineItem[];
  /** Integer cents, like every amount here. */
  subtotal: number;
  description: string | null;
  /** Empty when the merchant does not ship: no shipping step. */
  shippingMethods: ShippingMethod[];
  expiresAt: string;
  /** Days "Remember me on this device" lasts; null where the service remembers no device. */
  rememberDeviceDays: number | null;
}

export interface NewWalletCard {
  /** Digits; spaces and dashes as typed are ignored. */
  number: string;
  expMonth: number;
  expYear: number;
  nameOnCard: string;
  billingAddressId: number;
  isDefault?: boolean;
}

/** What a shopper can change of a saved card, as the checkout page names it. */
export type WalletCardChanges = Omit<CardChanges, 'nickname'> & { nickName?: string | null };

export interface WalletView {
  email: string;
  phone: string | null;
  firstName: string;
  lastName: string;
  /** Default first, then newest. */
  cards: WalletCard[];
  /** Defaults first, then newest. */
  addresses: WalletAddress[];
}

export interface Quote {
  currency: string;
  subtotal: number;
  shipping: number;
  taxes: number;
  total: number;
}

export interface QuoteInput extends ShippingChoice {
  /** The card whose billing address sets the tax state when nothing is shipped. */
  paymentId?: string;
}

function unauthorized(message: string): DomainError {
  return new DomainError('SHOPPER_UNAUTHORIZED', message);
}

export class Checkout {
  readonly #payments: PaymentStep;
  readonly #enrolments: Enrolments;

  constructor(private readonly deps: CheckoutDeps) {
    this.#payments = new PaymentStep(deps);
    this.#enrolments = new Enrolments(deps);
  }

  async summary(orderId: string): Promise<OrderSummary> {
    const order = await findOrder(this.deps.orders, orderId);
    const merchant = await findMerchant(this.deps.merchants, order);
    return {
      orderId: order.id,
      status: order.status,
      merchantName: merchant.name,
      variant: merchant.variant,
      authorizationMode: merchant.authorizationMode,
      currency: order.currency,
      lineItems: order.lineItems,
      subtotal: order.subtotal,
      description: order.description,
      shippingMethods: merchant.shippingMethods,
      expiresAt: new Date(order.expiresAt).toISOString(),
      rememberDeviceDays: this.#rememberDeviceDays(merchant),
    };
  }

  /** How long a device is remembered at this merchant's checkout; null when it is not offered. */
  #rememberDeviceDays(merchant: Merchant): number | null {
    return merchant.rememberDevices ? (this.deps.shopperAuth.rememberDeviceDays ?? null) : null;
  }

  /**
   * A code for a known shopper; `{ status: 'enrol' }` for an email without a wallet. `client`: the
   * asking client's `clientKey`, which the daily cap of codes per client counts under.
   */
  async requestCode(orderId: string, email: string, client?: string): Promise<CodeRequestResult> {
    await findOpenOrder(this.deps.orders, orderId);
    return this.deps.shopperAuth.requestCode(orderId, email, { client });
  }

  /**
   * A new shopper's details wait for the code. The security code is asked only where the service pays:
   * it goes with the first payment. In `merchant` mode nothing would ever send it, so none is taken.
   */
  async enrol(orderId: string, input: EnrolInput, client?: string): Promise<CodeRequestResult> {
    const order = await findOpenOrder(this.deps.orders, orderId);
    const merchant = await findMerchant(this.deps.merchants, order);
    if (merchant.authorizationMode === 'service' && input.card.cvv === undefined) {
      throw new ValidationError(
        'card.cvv is required: this checkout sends the security code with the first payment',
      );
    }
    return this.#enrolments.start(orderId, input, client);
  }

  /**
   * Proves the code; for a new shopper, also completes the enrolment the code was sent for. With
   * `rememberDevice`, where the merchant's checkout offers it, the answer carries a device token that
   * signs the shopper in to later checkouts. `client` (its `clientKey`) has then proved the email.
   */
  async verify(
    orderId: string,
    email: string,
    code: string,
    rememberDevice = false,
    client?: string,
  ): Promise<ShopperTokenGrant & { device?: DeviceGrant }> {
    const { shopperAuth } = this.deps;
    const order = await findOpenOrder(this.deps.orders, orderId);
    const grant = await shopperAuth.verifyCode(orderId, email, code, client);
    let identity = await shopperAuth.authenticate(grant.shopperToken);
    if (!identity) {
      await this.#enrolments.complete(orderId, email, grant.shopperToken);
      identity = await shopperAuth.authenticate(grant.shopperToken);
    }
    const merchant = await findMerchant(this.deps.merchants, order);
    const offered = rememberDevice && this.#rememberDeviceDays(merchant) !== null;
    const device =
      offered && identity
        ? await shopperAuth.rememberDevice(
            identity.shopperId,
            { orderId, merchantId: merchant.id },
            { email, shopName: merchant.name },
          )
        : undefined;
    return device ? { ...grant, device } : grant;
  }

  /**
   * Signs in the shopper a remembered device stands for, without a code. With `email` (a guest redirect,
   * or what the shopper typed), the device must remember that shopper: one that remembers another is
   * forgotten, as someone else now checks out on it.
   */
  async resume(
    orderId: string,
    deviceToken: string,
    email?: string,
  ): Promise<ShopperTokenGrant & { deviceExpiresAt: string }> {
    const { shopperAuth, wallet } = this.deps;
    const order = await findOpenOrder(this.deps.orders, orderId);
    const merchant = await findMerchant(this.deps.merchants, order);
    if (!merchant.rememberDevices) {
      throw new DomainError(
        'DEVICE_NOT_RECOGNIZED',
        'This shop asks for a one-time code at every checkout; sign in with a code.',
      );
    }
    const device = await shopperAuth.recognizeDevice(deviceToken, merchant.id);
    if (!device) throw notRecognized();
    const { shopperId, expiresAt: deviceExpiresAt } = device;
    if (email !== undefined && (await wallet.findShopperByEmail(email))?.id !== shopperId) {
      await shopperAuth.forgetDevice(deviceToken, {
        actor: SERVICE_ACTOR,
        orderId,
        merchantId: merchant.id,
        reason: 'another email was typed on the device',
      });
      throw new DomainError(
        'DEVICE_NOT_RECOGNIZED',
        'This device remembers another shopper than this email, and now forgets them; sign in with a one-time code.',
      );
    }
    const shopper = await wallet.getShopper(shopperId);
    const grant = await shopperAuth.signIn(
      orderId,
      { id: shopperId, email: shopper.email },
      { deviceToken, merchantId: merchant.id },
    );
    // Forgotten meanwhile ("forget every device", the wallet deleted): as if it had been before.
    if (!grant) throw notRecognized();
    return { ...grant, deviceExpiresAt };
  }

  /** The shopper a token signs in; with `orderId`, the token must have been issued for that order. */
  async authenticate(token: string | undefined, orderId?: string): Promise<string> {
    return (await this.identify(token, orderId)).shopperId;
  }

  /** Who a token signs in, for which order, and what proved them; else `401 SHOPPER_UNAUTHORIZED`. */
  async identify(token: string | undefined, orderId?: string): Promise<ShopperIdentity> {
    if (!token) throw unauthorized('Send the shopper token as "Authorization: Bearer <shopperToken>".');
    const identity = await this.deps.shopperAuth.authenticate(token);
    if (!identity) throw unauthorized('The shopper token is unknown or expired; sign in again.');
    if (orderId !== undefined && identity.orderId !== orderId) {
      throw unauthorized(`The shopper token was issued for another order than ${orderId}.`);
    }
    return identity;
  }

  /**
   * "Not you?": the token's sign-in ends, whoever it was, and the device given stops remembering its
   * shopper, if it was remembered at the sign-in's shop (a page of another shop on the same site may
   * hold a token of that shop's); without a token there is nothing to end.
   */
  async signOut(token: string | undefined, deviceToken?: string): Promise<void> {
    if (!token) throw unauthorized('Send the shopper token as "Authorization: Bearer <shopperToken>".');
    const { shopperAuth } = this.deps;
    const identity = await shopperAuth.authenticate(token);
    await shopperAuth.signOut(token);
    if (deviceToken !== undefined) {
      const order = identity && (await this.deps.orders.find(identity.orderId));
      await shopperAuth.forgetDevice(deviceToken, {
        actor: identity ? shopperActor(identity.shopperId) : SERVICE_ACTOR,
        ...(identity ? { orderId: identity.orderId } : {}),
        ...(order ? { merchantId: order.merchantId } : {}),
        reason: 'signed out on the device',
      });
    }
  }

  async walletOf(shopperId: string): Promise<WalletView> {
    const { wallet } = this.deps;
    const now = new Date(this.deps.now?.() ?? Date.now());
    const [shopper, cards, addresses] = await Promise.all([
      wallet.getShopper(shopperId),
      wallet.listCards(shopperId),
      wallet.listAddresses(shopperId),
    ]);
    return {
      email: shopper.email,
      phone: shopper.phone,
      firstName: shopper.firstName,
      lastName: shopper.lastName,
      cards: cards.map((card) => walletCard(card, wallet.isExpired(card, now))),
      addresses: addresses.map(walletAddress),
    };
  }

  /** A new address: from a remembered device's sign-in, only with a one-time code (`requireCode`). */
  async addAddress(identity: ShopperIdentity, input: NewAddress): Promise<WalletAddress> {
    const shopperId = requireCode(identity, 'address');
    return walletAddress(await this.deps.wallet.addAddress(shopperId, input, changedBy(identity)));
  }

  /**
   * A card the shopper typed in, or the renewal of one already saved with the same number. It is paid
   * with as a card on file: the security code typed with it goes with the payment that follows, and is
   * never asked again.
   */
  async addCard(
    identity: ShopperIdentity,
    input: NewWalletCard,
  ): Promise<{ card: WalletCard; created: boolean }> {
    const { number, ...rest } = input;
    const { shopperId } = identity;
    const saved = await this.deps.wallet
      .saveCard({ ...rest, shopperId, pan: number }, changedBy(identity))
      .catch(panAs('number'));
    const now = new Date(this.deps.now?.() ?? Date.now());
    return {
      card: walletCard(saved.card, this.deps.wallet.isExpired(saved.card, now)),
      created: saved.created,
    };
  }

  /** Takes a card out of the shopper's wallet; the wallet as it is then. */
  async removeCard(identity: ShopperIdentity, paymentId: string): Promise<WalletView> {
    await this.deps.wallet.removeCard(identity.shopperId, paymentId, changedBy(identity));
    return this.walletOf(identity.shopperId);
  }

  async removeAddress(identity: ShopperIdentity, addressId: number): Promise<WalletView> {
    await this.deps.wallet.removeAddress(identity.shopperId, addressId, changedBy(identity));
    return this.walletOf(identity.shopperId);
  }

  /**
   * An address changed, under a new `addressId` if its values changed (Wallet.editAddress); and the
   * wallet. New values are a new address: from a remembered device's sign-in they take a one-time code.
   */
  async editAddress(
    identity: ShopperIdentity,
    addressId: number,
    changes: AddressChanges,
  ): Promise<{ address: WalletAddress; wallet: WalletView }> {
    const { shopperId } = identity;
    const { wallet } = this.deps;
    if (identity.proof !== 'code') {
      const address = await wallet.findAddress(addressId);
      if (address?.shopperId === shopperId && Object.keys(addressEdits(address, changes)).length > 0) {
        requireCode(identity, 'address');
      }
    }
    const address = await wallet.editAddress(shopperId, addressId, changes, changedBy(identity));
    return { address: walletAddress(address), wallet: await this.walletOf(shopperId) };
  }

  /** A card's nickname, name, billing address or default mark changed; and the wallet. */
  async editCard(
    identity: ShopperIdentity,
    paymentId: string,
    changes: WalletCardChanges,
  ): Promise<{ card: WalletCard; wallet: WalletView }> {
    const { nickName, ...rest } = changes;
    const { wallet } = this.deps;
    const { shopperId } = identity;
    const edits = { ...rest, ...(nickName !== undefined ? { nickname: nickName?.trim() || null } : {}) };
    const card = await wallet.editCard(shopperId, paymentId, edits, changedBy(identity));
    const now = new Date(this.deps.now?.() ?? Date.now());
    return { card: walletCard(card, wallet.isExpired(card, now)), wallet: await this.walletOf(shopperId) };
  }

  /**
   * "Delete my wallet": the signed-in shopper erases their wallet, as `wallet-checkout shopper erase` does
   * (shopper-erasure.ts). This checkout's sign-in ends with it; the email is free for a new wallet. It
   * cannot be undone, so a remembered device's sign-in needs a one-time code for it (`requireCode`).
   */
  async deleteWallet(identity: ShopperIdentity): Promise<void> {
    const shopperId = requireCode(identity, 'delete-wallet');
    const shopper = await this.deps.wallet.getShopper(shopperId);
    const { db, limits, wallet } = this.deps;
    await eraseShopper({ db, limits, wallet }, shopper, shopperActor(shopperId));
  }

  /** The amounts as chosen so far; taxes follow the shipping address, else the card's billing address. */
  async quote(shopperId: string, orderId: string, input: QuoteInput): Promise<Quote> {
    const order = await findOpenOrder(this.deps.orders, orderId);
    const merchant = await findMerchant(this.deps.merchants, order);
    const { wallet } = this.deps;
    const shipping = await chooseShipping(wallet, merchant, shopperId, input, false);
    let state = shipping.address?.state ?? null;
    if (state === null && input.paymentId !== undefined) {
      const card = await wallet.findCard(input.paymentId);
      if (card?.shopperId === shopperId) {
        state = (await shopperAddress(wallet, shopperId, card.billingAddressId, 'billing address')).state;
      }
    }
    const shippingAmount = shipping.method?.price ?? 0;
    const taxes = taxesFor(merchant.taxSettings, order.subtotal, state);
    return {
      currency: order.currency,
      subtotal: order.subtotal,
      shipping: shippingAmount,
      taxes,
      total: chargedTotal(order.subtotal, shippingAmount, taxes),
    };
  }

  pay(shopperId: string, orderId: string, input: PayInput): Promise<PayResult> {
    return this.#payments.pay(shopperId, orderId, input);
  }

  /** The shopper closed the checkout: ABANDONED. Closing an abandoned order again changes nothing. */
  async close(orderId: string): Promise<{ orderId: string; status: 'ABANDONED' }> {
    const order = await findOrder(this.deps.orders, orderId);
    if (order.status !== 'ABANDONED') await this.deps.orders.abandon(orderId);
    return { orderId, status: 'ABANDONED' };
  }

  /** Deletes enrolments past their life. Run periodically. */
  sweep(): Promise<number> {
    return this.#enrolments.sweep();
  }

  /** Finishes the payments a stopped or crashed process left under way (`PaymentStep.settleStalled`). */
  settleStalledPayments(before?: number): Promise<number> {
    return this.#payments.settleStalled(before);
  }
}

function notRecognized(): DomainError {
  return new DomainError(
    'DEVICE_NOT_RECOGNIZED',
    'This device is not remembered at this shop (any more); sign in with a one-time code.',
  );
}
