import type { Transaction } from 'kysely';
import type { Database, Db } from '../db/index.js';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import type { Merchant } from '../merchants/types.js';
import type { KeyRing } from '../vault/keyring.js';
import type { NewMessage, WebhookMessageRow } from '../webhooks/index.js';
import { OrdersRepo } from './repo.js';
import { type OrderEvent, OrderTransitionError, transition } from './state.js';
import type { Order, OrderListFilter, OrderPage, PaymentAttempt, TransactionDetails } from './types.js';
import { subtotalOf, validateOrder } from './validation.js';

export const ORDER_SUCCEEDED = 'ORDER_SUCCEEDED';
export const ORDER_FAILED = 'ORDER_FAILED';

/** 1 hour: an order nobody pays within it is ABANDONED (a checkout takes minutes). */
export const DEFAULT_ORDER_LIFETIME_MS = 60 * 60_000;

export interface OrdersDeps {
  db: Db;
  keyRing: KeyRing;
  outbox: {
    newMessage(message: NewMessage, now: number): WebhookMessageRow;
    insertMessages(trx: Transaction<Database>, rows: WebhookMessageRow[]): Promise<void>;
  };
  dispatcher: { committed(rows: WebhookMessageRow[]): void };
  lifetimeMs?: number;
  now?: () => number;
}

function notFound(orderId: string): NotFoundError {
  return new NotFoundError('ORDER_NOT_FOUND', `order ${orderId} was not found.`);
}

/**
 * Orders of the default checkout: created from the merchant's page, paid in the hosted checkout, ended
 * by exactly one of SUCCEEDED, FAILED or ABANDONED. Every status change goes through `transition` and a
 * conditional update, so two writers racing on one order cannot both win; the outcomes the merchant
 * must learn (ORDER_SUCCEEDED, ORDER_FAILED) write their webhook message in the same transaction.
 */
export class Orders {
  readonly #repo: OrdersRepo;
  readonly #lifetimeMs: number;
  readonly #now: () => number;

  constructor(private readonly deps: OrdersDeps) {
    this.#repo = new OrdersRepo(deps.db, deps.keyRing);
    this.#lifetimeMs = deps.lifetimeMs ?? DEFAULT_ORDER_LIFETIME_MS;
    this.#now = deps.now ?? Date.now;
  }

  /** A new CREATED order from the SDK's order input; `origin` must be one of the merchant's. */
  async create(merchant: Merchant, input: unknown, origin: string): Promise<Order> {
    if (!merchant.allowedOrigins.includes(origin)) {
      throw new DomainError(
        'ORIGIN_NOT_ALLOWED',
        `Origin ${origin} is not allowed for merchant ${merchant.id}.`,
      );
    }
    const order = validateOrder(input);
    const subtotal = subtotalOf(order);
    if (order.total !== undefined && order.total < subtotal) {
      throw new ValidationError(`total ${order.total} is less than subtotal ${subtotal}`);
    }
    const now = this.#now();
    const created: Order = {
      id: newId('order'),
      merchantId: merchant.id,
      merchantOrderId: order.orderId ?? null,
      origin,
      status: 'CREATED',
      currency: order.currencyCode ?? 'USD',
      lineItems: order.lineItems,
      subtotal,
      total: order.total ?? subtotal,
      description: order.orderDescription ?? null,
      payment: null,
      transactionDetails: null,
      error: null,
      merchantAuthorization: null,
      expiresAt: now + this.#lifetimeMs,
      createdAt: now,
      updatedAt: now,
    };
    await this.#repo.insert(created);
    return created;
  }

  /** The merchant's order; another merchant's order is ORDER_NOT_FOUND, like one that does not exist. */
  async get(merchantId: string, orderId: string): Promise<Order> {
    const order = await this.#repo.findOwned(merchantId, orderId);
    if (!order) throw notFound(orderId);
    return order;
  }

  /**
   * A page of the merchant's orders, newest first, after the order `startingAfter` names (the last of
   * the previous page). The cursor is looked up without the filters: it is a position in the list, and
   * its order may have changed state since. Another merchant's order there is ORDER_NOT_FOUND.
   */
  async list(merchantId: string, filter: OrderListFilter & { startingAfter?: string }): Promise<OrderPage> {
    const { startingAfter, ...rest } = filter;
    if (startingAfter === undefined) return this.#repo.listPage(merchantId, rest);
    const after = await this.#repo.findOwned(merchantId, startingAfter);
    if (!after) {
      throw new NotFoundError('ORDER_NOT_FOUND', `startingAfter: order ${startingAfter} was not found.`);
    }
    return this.#repo.listPage(merchantId, { ...rest, after });
  }

  /** Any merchant's order, for the hosted checkout and the webhook payloads, which are not merchant-scoped. */
  find(orderId: string): Promise<Order | undefined> {
    return this.#repo.find(orderId);
  }

  /**
   * True while the shopper can still act on the order: CREATED and not expired, or a payment under way.
   * A merchant-authorized selection is PROCESSING for good, but the shopper's part ended with it: its
   * page closes at the order's usual end of life.
   */
  isOpen(order: Order): boolean {
    if (order.status === 'PROCESSING' && order.merchantAuthorization === null) return true;
    return (order.status === 'CREATED' || order.status === 'PROCESSING') && order.expiresAt > this.#now();
  }

  /** Abandons every CREATED order past its `expiresAt`; returns how many. Run periodically. */
  expireDue(): Promise<number> {
    return this.#repo.expire('CREATED', transition('CREATED', 'EXPIRE'), this.#now());
  }

  /** Payments under way since before `before` with no decision recorded (see `PaymentStep.settleStalled`). */
  stalledPayments(before: number, limit: number): Promise<Order[]> {
    return this.#repo.stalledPayments(before, limit);
  }

  /**
   * Takes a payment under way for one more ask of the gateway, by one submit or sweep of all those that
   * read `order` (its `updatedAt` becomes now); false when another took it, or it settled, meanwhile.
   */
  claimPayment(order: Order): Promise<boolean> {
    return this.#repo.touchProcessing(order.id, order.updatedAt, this.#now());
  }

  /** The shopper paid: the payment goes to the gateway. Refused once the order has expired. */
  markProcessing(orderId: string, payment: PaymentAttempt): Promise<Order> {
    return this.#apply(orderId, 'SUBMIT_PAYMENT', { payment });
  }

  /**
   * Merchant authorization mode: the shopper's selection went to the merchant's page with `sessionId`,
   * and the merchant's processor takes the payment. PROCESSING from here on: the order leaves the expiry
   * sweep, and the service, which never sees the processor's decision, sets no later status.
   */
  markSelected(orderId: string, payment: PaymentAttempt, sessionId: string): Promise<Order> {
    return this.#apply(orderId, 'SUBMIT_PAYMENT', {
      payment,
      merchantAuthorization: { sessionId, externalResponse: null },
    });
  }

  /** The gateway approved: SUCCEEDED, and an ORDER_SUCCEEDED webhook to the merchant. */
  markSucceeded(orderId: string, transactionDetails: TransactionDetails): Promise<Order> {
    return this.#apply(orderId, 'PAYMENT_SUCCEEDED', { transactionDetails }, ORDER_SUCCEEDED);
  }

  /** The gateway declined or failed: FAILED with the interface's code, and an ORDER_FAILED webhook. */
  markFailed(orderId: string, code: string, message: string | null): Promise<Order> {
    return this.#apply(orderId, 'PAYMENT_FAILED', { error: { code, message } }, ORDER_FAILED);
  }

  /** The shopper closed the checkout without paying. */
  abandon(orderId: string): Promise<Order> {
    return this.#apply(orderId, 'CLOSE', {});
  }

  async #apply(
    orderId: string,
    event: OrderEvent,
    changes: Partial<Order>,
    eventName?: string,
  ): Promise<Order> {
    const now = this.#now();
    let message: WebhookMessageRow | undefined;
    const updated = await this.deps.db.kysely.transaction().execute(async (trx) => {
      const current = await this.#repo.find(orderId, trx);
      if (!current) throw notFound(orderId);
      if (event === 'SUBMIT_PAYMENT' && current.status === 'CREATED' && current.expiresAt <= now) {
        throw new DomainError(
          'ORDER_STATE_CONFLICT',
          `order ${orderId} expired at ${new Date(current.expiresAt).toISOString()}; create a new order.`,
        );
      }
      const status = transition(current.status, event, current.id);
      const next: Order = { ...current, ...changes, status, updatedAt: now };
      if (!(await this.#repo.update(trx, next, current.status))) {
        const latest = await this.#repo.find(orderId, trx);
        throw new OrderTransitionError(orderId, latest?.status ?? current.status, event);
      }
      if (eventName) {
        message = this.deps.outbox.newMessage(
          { merchantId: next.merchantId, eventName, subjectId: next.id, schedule: 'default' },
          now,
        );
        await this.deps.outbox.insertMessages(trx, [message]);
      }
      return next;
    });
    if (message) this.deps.dispatcher.committed([message]);
    return updated;
  }
}
