import type { LineItem, Order, OrderState, ShippingMethod, TransactionDetails } from './types.js';

/**
 * The order as merchants see it, in `GET /orders/{orderId}` and in the ORDER_SUCCEEDED / ORDER_FAILED
 * webhooks alike, so one parser serves both. Amounts are integer cents.
 */
export interface OrderView {
  orderId: string;
  merchantOrderId: string | null;
  status: OrderState;
  currency: string;
  lineItems: LineItem[];
  subtotal: number;
  /** The merchant's total (or the subtotal) until payment; then subtotal + shipping + taxes as charged. */
  total: number;
  description: string | null;
  email: string | null;
  shipping: { addressId: string | null; method: ShippingMethod | null; amount: number } | null;
  taxes: number | null;
  transactionDetails: TransactionDetails | null;
  error: { errorCode: string; errorMessage: string | null } | null;
  /** Merchant authorization mode only; null when the service's gateway took the payment (or none yet). */
  merchantAuthorization: {
    sessionId: string;
    paymentId: string;
    externalResponse: {
      externalResponseId: string;
      pspHostName: string;
      amount: number;
      currency: string;
      isRecurring: boolean;
      reportedAt: string;
    } | null;
  } | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
}

function merchantAuthorizationView(order: Order): OrderView['merchantAuthorization'] {
  const { merchantAuthorization: authorization, payment } = order;
  if (!authorization || !payment) return null;
  const reported = authorization.externalResponse;
  return {
    sessionId: authorization.sessionId,
    paymentId: payment.paymentId,
    externalResponse: reported && {
      externalResponseId: reported.externalResponseId,
      pspHostName: reported.pspHostName,
      amount: reported.amount,
      currency: reported.currency,
      isRecurring: reported.isRecurring,
      reportedAt: new Date(reported.reportedAt).toISOString(),
    },
  };
}

export function toOrderView(order: Order): OrderView {
  const { payment } = order;
  const shipped = payment && (payment.shippingMethod !== null || payment.shippingAddressId !== null);
  return {
    orderId: order.id,
    merchantOrderId: order.merchantOrderId,
    status: order.status,
    currency: order.currency,
    lineItems: order.lineItems,
    subtotal: order.subtotal,
    total: payment?.chargedAmount ?? order.total,
    description: order.description,
    email: payment?.email ?? null,
    shipping: shipped
      ? {
          addressId: payment.shippingAddressId,
          method: payment.shippingMethod,
          amount: payment.shippingAmount,
        }
      : null,
    taxes: payment?.taxAmount ?? null,
    transactionDetails: order.transactionDetails,
    error: order.error && { errorCode: order.error.code, errorMessage: order.error.message },
    merchantAuthorization: merchantAuthorizationView(order),
    expiresAt: new Date(order.expiresAt).toISOString(),
    createdAt: new Date(order.createdAt).toISOString(),
    updatedAt: new Date(order.updatedAt).toISOString(),
  };
}
