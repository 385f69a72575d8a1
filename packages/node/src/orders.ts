import type { Order } from './types.js';

/** What your server recorded for an order before the shopper paid: what the order must match. */
export interface ExpectedOrder {
  /** Your own order id: the `orderId` your page gave to `createOrder`. */
  merchantOrderId: string;
  /** Integer cents: the subtotal your server computed from its own prices (shipping and taxes come on top). */
  subtotal: number;
  /** `USD` unless given. */
  currency?: string;
}

/** Whether an order is paid as expected, and why not when it is not. */
export type OrderCheck = { paid: true } | { paid: false; reason: string };

/**
 * The checks to make before shipping an order of the default flow, on `GET /orders/{orderId}` or an
 * ORDER_SUCCEEDED webhook: it is your order, it SUCCEEDED, in your currency, for the subtotal your server
 * computed, and its total is that subtotal with the shipping and taxes the shopper chose. The browser's
 * word proves nothing: a page can be tampered with.
 */
export function checkOrder(order: Order, expected: ExpectedOrder): OrderCheck {
  const id = order.orderId;
  if (order.merchantOrderId !== expected.merchantOrderId) {
    const theirs = order.merchantOrderId === null ? 'no order id of yours' : `order ${order.merchantOrderId}`;
    return { paid: false, reason: `Order ${id} is for ${theirs}, not ${expected.merchantOrderId}.` };
  }
  if (order.status !== 'SUCCEEDED') {
    const error = order.error
      ? ` (${order.error.errorCode}: ${order.error.errorMessage ?? 'no message'})`
      : '';
    return { paid: false, reason: `Order ${id} is ${order.status}${error}, not SUCCEEDED.` };
  }
  const currency = expected.currency ?? 'USD';
  if (order.currency !== currency || order.subtotal !== expected.subtotal) {
    return {
      paid: false,
      reason: `Order ${id} has a subtotal of ${order.subtotal} ${order.currency} cents, not the ${expected.subtotal} ${currency} expected.`,
    };
  }
  const charged = order.subtotal + (order.shipping?.amount ?? 0) + (order.taxes ?? 0);
  if (order.total !== charged) {
    return {
      paid: false,
      reason: `Order ${id} has a total of ${order.total} cents, not its subtotal, shipping and taxes (${charged}).`,
    };
  }
  return { paid: true };
}
