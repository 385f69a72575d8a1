/** Look-ups every checkout step makes, with the errors the checkout page's API answers. */
import { createHmac } from 'node:crypto';
import { type AuditDetails, shopperActor } from '../audit/index.js';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import type { Merchant, ShippingMethod } from '../merchants/index.js';
import { dollars } from '../money.js';
import { MAX_CENTS, type Order, type Orders } from '../orders/index.js';
import type { ShopperIdentity } from '../shopper-auth/index.js';
import type { Address, ChangedBy, Wallet } from '../wallet/index.js';

/**
 * The signed-in shopper, as the audit trail records their wallet's changes: with the order and what
 * proved them, and `details` of the moment (an enrolment).
 */
export const changedBy = (
  { shopperId, orderId, proof }: ShopperIdentity,
  details: AuditDetails = {},
): ChangedBy => ({ actor: shopperActor(shopperId), details: { orderId, proof, ...details } });

/** The vault and the wallet name a card number `pan`; the checkout page's fields name it `field`. */
export const panAs =
  (field: string) =>
  (error: unknown): never => {
    if (error instanceof ValidationError) {
      throw new ValidationError(error.message.replace(/^pan:/, `${field}:`));
    }
    throw error;
  };

export async function findOrder(orders: Orders, orderId: string): Promise<Order> {
  const order = await orders.find(orderId);
  if (!order) throw new NotFoundError('ORDER_NOT_FOUND', `order ${orderId} was not found.`);
  return order;
}

/** The order, if the shopper can still act on it: CREATED and not expired. */
export async function findOpenOrder(orders: Orders, orderId: string): Promise<Order> {
  const order = await findOrder(orders, orderId);
  if (order.status !== 'CREATED' || !orders.isOpen(order)) {
    const why = order.status === 'CREATED' ? 'expired' : order.status;
    throw new DomainError('ORDER_STATE_CONFLICT', `order ${orderId} is ${why}; this checkout has ended.`);
  }
  return order;
}

export async function findMerchant(
  merchants: { get(id: string): Promise<Merchant | undefined> },
  order: Order,
): Promise<Merchant> {
  const merchant = await merchants.get(order.merchantId);
  if (!merchant) throw new Error(`merchant ${order.merchantId} of order ${order.id} no longer exists`);
  return merchant;
}

/**
 * One of the addresses in the shopper's wallet; anyone else's, or one removed, is not found, like one that
 * does not exist.
 */
export async function shopperAddress(
  wallet: Wallet,
  shopperId: string,
  addressId: number,
  field: string,
): Promise<Address> {
  const address = await wallet.findAddress(addressId);
  if (address?.shopperId !== shopperId || address.removedAt !== null) {
    throw new NotFoundError(
      'ADDRESS_NOT_FOUND',
      `${field}: no address ${addressId} in the shopper's wallet.`,
    );
  }
  return address;
}

export interface ShippingChoice {
  shippingAddressId?: number;
  shippingMethodId?: string;
}

export interface Shipping {
  address: Address | null;
  method: ShippingMethod | null;
}

/**
 * The shipping address and method chosen, checked against the shopper's wallet and the merchant's
 * list. A merchant without shipping methods does not ship: naming either is refused. With `required`
 * (the pay step) a merchant that ships needs both.
 */
export async function chooseShipping(
  wallet: Wallet,
  merchant: Merchant,
  shopperId: string,
  choice: ShippingChoice,
  required: boolean,
): Promise<Shipping> {
  if (merchant.shippingMethods.length === 0) {
    for (const field of ['shippingAddressId', 'shippingMethodId'] as const) {
      if (choice[field] !== undefined) {
        throw new ValidationError(`${field}: ${merchant.name} does not ship; leave it out`);
      }
    }
    return { address: null, method: null };
  }
  if (required && choice.shippingAddressId === undefined) {
    throw new ValidationError(`shippingAddressId is required: ${merchant.name} ships this order`);
  }
  if (required && choice.shippingMethodId === undefined) {
    throw new ValidationError(`shippingMethodId is required: ${merchant.name} ships this order`);
  }
  const address =
    choice.shippingAddressId === undefined
      ? null
      : await shopperAddress(wallet, shopperId, choice.shippingAddressId, 'shippingAddressId');
  let method: ShippingMethod | null = null;
  if (choice.shippingMethodId !== undefined) {
    method = merchant.shippingMethods.find((entry) => entry.externalId === choice.shippingMethodId) ?? null;
    if (!method) {
      throw new ValidationError(
        `shippingMethodId: must be one of ${merchant.shippingMethods.map((entry) => entry.externalId).join(', ')}`,
      );
    }
  }
  return { address, method };
}

/**
 * What the shopper is shown and charged: subtotal + shipping + taxes, integer cents. The order's MAX_CENTS
 * bounds this too, so quote and pay refuse a choice above it alike, before anything reaches the gateway;
 * the order stays CREATED, and a cheaper shipping method, or an address taxed less, may still pay it.
 */
export function chargedTotal(subtotal: number, shipping: number, taxes: number): number {
  const total = subtotal + shipping + taxes;
  if (total > MAX_CENTS) {
    // The checkout shows this message to the shopper as it is.
    throw new ValidationError(
      `The total of ${dollars(total)} with shipping and taxes is more than one payment can be (${dollars(MAX_CENTS)}). Choose another shipping method or address, or ask the shop to split the order.`,
    );
  }
  return total;
}

/** 32 characters of base64url: 192 bits, more than enough for a reference nobody can guess. */
const PAYMENT_TOKEN_LENGTH = 32;

/**
 * `paymentToken` of section 2.7: an opaque reference to this card in this order, an HMAC under a key
 * derived for the purpose, so it says nothing about the card and cannot be made without the key.
 */
export function paymentToken(key: Buffer, orderId: string, cardId: string): string {
  const mac = createHmac('sha256', key).update(`${orderId}.${cardId}`).digest('base64url');
  return `ptk_${mac.slice(0, PAYMENT_TOKEN_LENGTH)}`;
}
