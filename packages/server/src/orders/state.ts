import { DomainError } from '../errors.js';
import type { OrderState } from './types.js';

/**
 * What can happen to an order (the diagram is in this folder's README):
 * - `SUBMIT_PAYMENT`: the shopper paid; the payment is on its way to the gateway.
 * - `PAYMENT_SUCCEEDED`: the gateway approved it.
 * - `PAYMENT_FAILED`: the gateway declined it, or failed.
 * - `CLOSE`: the shopper closed the checkout without paying.
 * - `EXPIRE`: the order was left open past its `expiresAt`.
 */
export type OrderEvent = 'SUBMIT_PAYMENT' | 'PAYMENT_SUCCEEDED' | 'PAYMENT_FAILED' | 'CLOSE' | 'EXPIRE';

/**
 * The only place that says which state follows which; a missing entry is a forbidden transition. A
 * payment under way cannot be abandoned: the gateway's answer decides, so every checkout has exactly one
 * terminal outcome.
 */
const TRANSITIONS: Record<OrderState, Partial<Record<OrderEvent, OrderState>>> = {
  CREATED: { SUBMIT_PAYMENT: 'PROCESSING', CLOSE: 'ABANDONED', EXPIRE: 'ABANDONED' },
  PROCESSING: { PAYMENT_SUCCEEDED: 'SUCCEEDED', PAYMENT_FAILED: 'FAILED' },
  SUCCEEDED: {},
  FAILED: {},
  ABANDONED: {},
};

export class OrderTransitionError extends DomainError {
  constructor(
    readonly orderId: string,
    readonly from: OrderState,
    readonly event: OrderEvent,
  ) {
    super('ORDER_STATE_CONFLICT', `order ${orderId} is ${from}; it cannot take ${event}.`);
    this.name = 'OrderTransitionError';
  }
}

export function transition(from: OrderState, event: OrderEvent, orderId = 'order'): OrderState {
  const to = TRANSITIONS[from][event];
  if (to === undefined) throw new OrderTransitionError(orderId, from, event);
  return to;
}
