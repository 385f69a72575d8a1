import type { Id } from '../ids.js';

export type OrderId = Id<'order'>;

export const ORDER_STATES = ['CREATED', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'ABANDONED'] as const;
export type OrderState = (typeof ORDER_STATES)[number];

/** One line of the order input (interface section 2.6); amounts are integer cents. */
export interface LineItem {
  /** Written in capitals, exactly `SKU`. */
  SKU: string;
  name?: string;
  amount?: number;
  category?: string;
}

/** The argument of the SDK's `actions.createOrder`, checked by `validateOrder`. */
export interface OrderInput {
  lineItems: LineItem[];
  subtotal?: number;
  total?: number;
  /** The merchant's own order id; the API returns it as `merchantOrderId`. */
  orderId?: string;
  orderDescription?: string;
  currencyCode?: string;
}

/** Interface section 2.9. */
export interface ShippingMethod {
  externalId: string;
  name: string;
  /** Integer cents. */
  price: number;
}

/** Interface section 2.11: the gateway's answer, passed through to the merchant. */
export interface TransactionDetails {
  networkTransactionId: string | null;
  gatewayTransactionId: string;
  /** An object or an XML/JSON string, as the gateway answered. */
  gatewayResponse: unknown;
  /** Connected checkout variant only. */
  stpReferenceNum?: string;
}

/** What the payment step knows when it submits the payment (CREATED → PROCESSING). */
export interface PaymentAttempt {
  email: string;
  shopperId: string | null;
  paymentId: string;
  shippingAddressId: string | null;
  billingAddressId: string | null;
  shippingMethod: ShippingMethod | null;
  /** Integer cents. */
  shippingAmount: number;
  taxAmount: number;
  /** subtotal + shipping + taxes: what the gateway is asked to charge. */
  chargedAmount: number;
}

/** What the merchant reported with `POST /payments/externalresponse` (never the raw response). */
export interface ExternalResponseLink {
  externalResponseId: string;
  pspHostName: string;
  /** Integer cents. */
  amount: number;
  currency: string;
  isRecurring: boolean;
  reportedAt: number;
}

/**
 * The merchant's own authorization mode: the shopper's selection went to the merchant's page with a
 * payment-carousel session, and the merchant's processor (not the service's gateway) takes the payment.
 */
export interface MerchantAuthorization {
  sessionId: string;
  /** The latest external response for this order's session and payment method; null until reported. */
  externalResponse: ExternalResponseLink | null;
}

export interface Order {
  id: OrderId;
  merchantId: string;
  merchantOrderId: string | null;
  origin: string;
  status: OrderState;
  currency: string;
  lineItems: LineItem[];
  /** Integer cents: the merchant's subtotal, or the sum of the line item amounts. */
  subtotal: number;
  /** Integer cents: the merchant's total, or the subtotal. */
  total: number;
  description: string | null;
  /** Null until the payment step. */
  payment: PaymentAttempt | null;
  /** Null until the order SUCCEEDED. */
  transactionDetails: TransactionDetails | null;
  /** Set when the order FAILED: `"990"`, `"995"` or `"-1"` (whose message is null). */
  error: { code: string; message: string | null } | null;
  /** Set when the shopper's selection was handed to the merchant instead of paying; else null. */
  merchantAuthorization: MerchantAuthorization | null;
  expiresAt: number;
  createdAt: number;
  updatedAt: number;
}

/** What `GET /orders` narrows the merchant's orders to; times are epoch ms. */
export interface OrderListFilter {
  status?: OrderState;
  merchantOrderId?: string;
  /** Created at or after. */
  createdSince?: number;
  /** Created before. */
  createdBefore?: number;
  /** 1 to 100. */
  limit: number;
}

/** A page of orders, newest first; `hasMore` when older ones match beyond it. */
export interface OrderPage {
  data: Order[];
  hasMore: boolean;
}
