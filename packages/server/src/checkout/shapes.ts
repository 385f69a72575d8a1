/**
 * The interface's shapes of the `success` arguments (sections 2.7–2.11) and of the shopper's wallet as
 * the checkout page shows it. Pure mapping from the wallet's records.
 */
import type { ShippingMethod, TransactionDetails } from '../orders/index.js';
import type { Address, Card, Shopper } from '../wallet/index.js';

/** Section 2.8: billing and shipping info. */
export interface AddressInfo {
  firstName: string;
  lastName: string;
  company: string | null;
  address1: string;
  address2: string | null;
  city: string;
  state: string;
  zip: string;
  country: string;
  phoneNumber: string | null;
  isDefaultBilling: boolean;
  isDefaultShipping: boolean;
  externalId: string;
}

/** Section 2.7's payment method object. */
export interface PaymentMethodInfo {
  address: AddressInfo;
  addressId: number;
  cardBrand: string;
  expMonth: number;
  expYear: number;
  externalId: string;
  fullNameCard: string;
  isDefault: boolean;
  last4CardNumber: string;
  needsCvv: boolean;
  nickName: string | null;
  paymentToken: string;
  /**
   * The network transaction id of the first successful payment with the card at the order's merchant:
   * stored credentials are agreed per merchant, so never another merchant's. Null before one.
   */
  storedCredentialsIdentifier: string | null;
}

/** Section 2.7: the second argument of `success`. */
export interface CustomerInfo {
  email: string;
  paymentMethod: PaymentMethodInfo;
  phoneNumber: string | null;
}

/** `{}` when the order has no shipping (section 2.8 says so of `shippingInfo`; `shippingMethod` follows). */
export type NoShipping = Record<string, never>;

export interface SuccessResult {
  outcome: 'success';
  orderId: string;
  customerInfo: CustomerInfo;
  shippingInfo: AddressInfo | NoShipping;
  billingInfo: AddressInfo;
  shippingMethod: ShippingMethod | NoShipping;
  /** Section 2.10: integer cents. */
  taxes: number;
  transactionDetails: TransactionDetails;
}

export interface ErrorResult {
  outcome: 'error';
  orderId: string;
  /** Section 7.2: `"990"`, `"995"` or `"-1"`. */
  errorCode: string;
  errorMessage: string | null;
}

/** `merchant` authorization mode: what the merchant's server needs to run the credentials flow. */
export interface PaymentSelection {
  orderId: string;
  sessionId: string;
  paymentId: string;
  billingInfo: AddressInfo;
  shippingInfo: AddressInfo | NoShipping;
  shippingMethod: ShippingMethod | NoShipping;
  taxes: number;
}

export interface PaymentSelectedResult {
  outcome: 'payment-selected';
  selection: PaymentSelection;
}

/**
 * The gateway has not answered yet (it timed out twice): the order stays PROCESSING, and the same submit
 * again asks again, once no earlier ask can still be in flight.
 */
export interface PendingResult {
  outcome: 'pending';
  orderId: string;
}

export type PayResult = SuccessResult | ErrorResult | PaymentSelectedResult | PendingResult;

export function addressInfo(address: Address): AddressInfo {
  return {
    firstName: address.firstName,
    lastName: address.lastName,
    company: address.company,
    address1: address.address1,
    address2: address.address2,
    city: address.city,
    state: address.state,
    zip: address.zip,
    country: address.country,
    phoneNumber: address.phoneNumber,
    isDefaultBilling: address.isDefaultBilling,
    isDefaultShipping: address.isDefaultShipping,
    externalId: address.externalId,
  };
}

/**
 * Section 2.7's `customerInfo` of a payment with `card`; `ofOrder` is what belongs to the order and its
 * merchant rather than to the card: its payment token and the card's stored credential at the merchant.
 */
export function customerInfo(
  shopper: Shopper,
  card: Card,
  billing: Address,
  ofOrder: Pick<PaymentMethodInfo, 'paymentToken' | 'storedCredentialsIdentifier'>,
): CustomerInfo {
  return {
    email: shopper.email,
    paymentMethod: {
      address: addressInfo(billing),
      addressId: billing.id,
      cardBrand: card.brand,
      expMonth: card.expMonth,
      expYear: card.expYear,
      externalId: card.id,
      fullNameCard: card.nameOnCard,
      isDefault: card.isDefault,
      last4CardNumber: card.last4,
      needsCvv: card.needsCvv,
      nickName: card.nickname,
      paymentToken: ofOrder.paymentToken,
      storedCredentialsIdentifier: ofOrder.storedCredentialsIdentifier,
    },
    phoneNumber: shopper.phone,
  };
}

/** A saved card in the checkout page's carousel. */
export interface WalletCard {
  paymentId: string;
  cardBrand: string;
  last4CardNumber: string;
  expMonth: number;
  expYear: number;
  fullNameCard: string;
  nickName: string | null;
  isDefault: boolean;
  needsCvv: boolean;
  /** Expired cards are shown disabled; paying with one is `PAYMENT_METHOD_EXPIRED`. */
  expired: boolean;
  billingAddressId: number;
}

/** An address in the checkout page: section 2.8's fields plus the integer `addressId` to send back. */
export interface WalletAddress extends AddressInfo {
  addressId: number;
}

export function walletCard(card: Card, expired: boolean): WalletCard {
  return {
    paymentId: card.id,
    cardBrand: card.brand,
    last4CardNumber: card.last4,
    expMonth: card.expMonth,
    expYear: card.expYear,
    fullNameCard: card.nameOnCard,
    nickName: card.nickname,
    isDefault: card.isDefault,
    needsCvv: card.needsCvv,
    expired,
    billingAddressId: card.billingAddressId,
  };
}

export function walletAddress(address: Address): WalletAddress {
  return { addressId: address.id, ...addressInfo(address) };
}
