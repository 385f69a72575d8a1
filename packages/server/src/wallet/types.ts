export interface Shopper {
  id: string;
  email: string;
  phone: string | null;
  firstName: string;
  lastName: string;
}

export interface Address {
  /** Internal integer id, exposed by the interface as `addressId`. */
  id: number;
  externalId: string;
  shopperId: string;
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
  /**
   * When the shopper removed the address (epoch ms): it is no longer listed or offered, while cards and
   * orders that name it still read it. Null while it is in the wallet.
   */
  removedAt: number | null;
}

/** A saved card as the wallet knows it: never the card number, only a reference into the vault. */
export interface Card {
  /** The card's `externalId`, which the interface calls `paymentId`. */
  id: string;
  shopperId: string;
  vaultId: string;
  billingAddressId: number;
  /** Lower-case network name: `visa`, `mastercard`, `amex`, `discover`… */
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  nameOnCard: string;
  nickname: string | null;
  isDefault: boolean;
  needsCvv: boolean;
  /**
   * When the shopper removed the card (epoch ms): it is no longer listed, and new payments and
   * credentials requests refuse it; those under way still reach it. Null while it is in the wallet.
   */
  removedAt: number | null;
}

export interface Session {
  id: string;
  merchantId: string;
  shopperId: string;
  createdAt: number;
  expiresAt: number;
  /** Made by the hosted checkout: the card the shopper chose there; null for the merchant's carousel. */
  paymentId: string | null;
  /** Made by the hosted checkout: the total the shopper agreed to, in cents. */
  amountLimit: number | null;
}
