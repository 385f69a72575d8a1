/**
 * The shop's own records: carts (one per browser, named by a cookie) and orders. Kept in memory so the
 * example runs without a database; a real shop keeps them in its database, because the order record is
 * what it fulfils from and what it reconciles webhooks and refunds against.
 */
import { randomBytes } from 'node:crypto';
import { findProduct, type Product } from './catalog.js';

export interface CartLine {
  product: Product;
  quantity: number;
}

/** Which checkout took the order: Wallet Checkout authorizes, or the shop's own processor does. */
export type Flow = 'wallet' | 'own-processor';

export type OrderState = 'AWAITING_PAYMENT' | 'PAID' | 'FAILED';

export interface StoreOrder {
  /** The shop's order number, sent to Wallet Checkout as `orderId` / `merchantReference`. */
  reference: string;
  flow: Flow;
  cartId: string;
  lines: CartLine[];
  /** Integer cents: the sum of the lines, fixed when checkout started. */
  subtotal: number;
  state: OrderState;
  /** Wallet Checkout's order id (`ord_…`), once known. */
  walletOrderId?: string;
  /** What was charged, shipping and taxes included, as confirmed on the server. */
  charged?: { total: number; shipping: number; taxes: number };
  /** How the payment was confirmed: `GET /orders/…`, a verified webhook, the shop's own processor. */
  confirmedBy: string[];
  transactionId?: string;
  failure?: { code: string; message: string };
  /** Verified webhooks received about this order: `ORDER_SUCCEEDED`, `PAYMENT_CREDENTIALS`… */
  webhooks: string[];
  createdAt: Date;
}

export class Carts {
  readonly #carts = new Map<string, Map<string, number>>();

  static newId(): string {
    return randomBytes(16).toString('hex');
  }

  lines(cartId: string): CartLine[] {
    const lines: CartLine[] = [];
    for (const [sku, quantity] of this.#carts.get(cartId) ?? []) {
      const product = findProduct(sku);
      if (product) lines.push({ product, quantity });
    }
    return lines;
  }

  /** Adds `quantity` (may be negative); a line that drops to zero or below is removed. */
  add(cartId: string, sku: string, quantity: number): void {
    const cart = this.#carts.get(cartId) ?? new Map<string, number>();
    const next = (cart.get(sku) ?? 0) + quantity;
    if (next > 0) cart.set(sku, Math.min(next, MAX_QUANTITY));
    else cart.delete(sku);
    this.#carts.set(cartId, cart);
  }

  remove(cartId: string, sku: string): void {
    this.#carts.get(cartId)?.delete(sku);
  }

  count(cartId: string): number {
    let count = 0;
    for (const quantity of this.#carts.get(cartId)?.values() ?? []) count += quantity;
    return count;
  }

  empty(cartId: string): void {
    this.#carts.delete(cartId);
  }
}

/** Per product line: enough for a demo, and it keeps totals far from any amount limit. */
export const MAX_QUANTITY = 20;

export function subtotalOf(lines: CartLine[]): number {
  return lines.reduce((sum, line) => sum + line.product.price * line.quantity, 0);
}

export class Orders {
  readonly #orders = new Map<string, StoreOrder>();

  /** Freezes the cart into a new order awaiting payment. */
  create(cartId: string, flow: Flow, lines: CartLine[]): StoreOrder {
    const order: StoreOrder = {
      reference: `DS-${randomBytes(5).toString('hex').toUpperCase()}`,
      flow,
      cartId,
      lines,
      subtotal: subtotalOf(lines),
      state: 'AWAITING_PAYMENT',
      confirmedBy: [],
      webhooks: [],
      createdAt: new Date(),
    };
    this.#orders.set(order.reference, order);
    return order;
  }

  get(reference: string): StoreOrder | undefined {
    return this.#orders.get(reference);
  }

  /** Newest first. */
  list(): StoreOrder[] {
    return [...this.#orders.values()].reverse();
  }
}
