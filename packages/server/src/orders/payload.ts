import { ORDER_FAILED, ORDER_SUCCEEDED } from './service.js';
import type { Order } from './types.js';
import { type OrderView, toOrderView } from './view.js';

export const ORDER_EVENTS: readonly string[] = [ORDER_SUCCEEDED, ORDER_FAILED];

/** The body of ORDER_SUCCEEDED and ORDER_FAILED: the event, the merchant, and the order's view. */
export interface OrderEventPayload extends OrderView {
  eventName: typeof ORDER_SUCCEEDED | typeof ORDER_FAILED;
  merchantId: string;
}

/**
 * Builds an order webhook's body at delivery time from the order, which no longer changes once it has
 * succeeded or failed, so every attempt sends the same body.
 */
export class OrderPayloadBuilder {
  constructor(private readonly orders: { find(orderId: string): Promise<Order | undefined> }) {}

  async build(orderId: string): Promise<OrderEventPayload> {
    const order = await this.orders.find(orderId);
    if (!order) throw new Error(`order ${orderId} no longer exists`);
    if (order.status !== 'SUCCEEDED' && order.status !== 'FAILED') {
      throw new Error(`order ${orderId} is ${order.status}, not an outcome to report`);
    }
    return {
      eventName: order.status === 'SUCCEEDED' ? ORDER_SUCCEEDED : ORDER_FAILED,
      merchantId: order.merchantId,
      ...toOrderView(order),
    };
  }
}
