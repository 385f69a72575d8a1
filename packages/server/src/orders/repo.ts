import type { Kysely, Transaction } from 'kysely';
import type { Database, Db } from '../db/index.js';
import type { OrdersTable } from '../db/schema.js';
import type { KeyRing } from '../vault/keyring.js';
import type {
  ExternalResponseLink,
  Order,
  OrderId,
  OrderListFilter,
  OrderPage,
  OrderState,
} from './types.js';

type Executor = Kysely<Database> | Transaction<Database>;

/** Which order an external response belongs to: the merchant, the selection's session and card. */
export interface ExternalResponseTarget {
  merchantId: string;
  sessionId: string;
  paymentId: string;
}

/**
 * Records `link` on the PROCESSING merchant-authorized order of `target`, in the caller's transaction (the
 * payments area calls it while it stores the external response, so both are written or neither). A
 * session that no checkout handed over (one from `POST /sandbox/sessions`) matches no order: false.
 */
export async function linkExternalResponse(
  trx: Transaction<Database>,
  target: ExternalResponseTarget,
  link: ExternalResponseLink,
): Promise<boolean> {
  const result = await trx
    .updateTable('orders')
    .set({ external_response: JSON.stringify(link), updated_at: link.reportedAt })
    .where('merchant_id', '=', target.merchantId)
    .where('session_id', '=', target.sessionId)
    .where('payment_id', '=', target.paymentId)
    .where('status', '=', 'PROCESSING')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * How many orders a shopper paid (or tried to) with each merchant, by status: for the shopper's request
 * for access (`wallet-checkout shopper show`). Reads the whole table, as no index leads with the shopper:
 * a command's occasional read, not a request's.
 */
export async function countShopperOrders(
  executor: Executor,
  shopperId: string,
): Promise<{ merchantId: string; status: OrderState; count: number }[]> {
  const rows = await executor
    .selectFrom('orders')
    .select((eb) => ['merchant_id', 'status', eb.fn.countAll<number | string>().as('count')])
    .where('shopper_id', '=', shopperId)
    .groupBy(['merchant_id', 'status'])
    .orderBy('merchant_id')
    .orderBy('status')
    .execute();
  return rows.map((row) => ({
    merchantId: row.merchant_id,
    status: row.status as OrderState,
    count: Number(row.count),
  }));
}

/**
 * Deletes up to `limit` ABANDONED orders whose life ended before `before`, in the caller's transaction
 * (the retention sweep's), walking the (status, expires_at) index; says how many. On PostgreSQL the rows
 * are locked as they are chosen, skipping locked ones, so two processes sweeping at once take different
 * orders.
 */
export async function deleteAbandonedOrders(
  executor: Executor,
  engine: Db['engine'],
  before: number,
  limit: number,
): Promise<number> {
  const abandoned = await executor
    .selectFrom('orders')
    .select('id')
    .where('status', '=', 'ABANDONED')
    .where('expires_at', '<', before)
    .orderBy('expires_at')
    .limit(limit)
    .$if(engine === 'postgres', (q) => q.forUpdate().skipLocked())
    .execute();
  if (abandoned.length === 0) return 0;
  const ids = abandoned.map((row) => row.id);
  await executor.deleteFrom('orders').where('id', 'in', ids).execute();
  return ids.length;
}

/**
 * All SQL of the `orders` table. Transaction details are sealed with the key ring here (associated
 * data: the order id, so a ciphertext copied to another order does not open), because a gateway's raw
 * response may echo card data.
 */
export class OrdersRepo {
  constructor(
    private readonly db: Db,
    private readonly keyRing: KeyRing,
  ) {}

  async insert(order: Order): Promise<void> {
    await this.db.kysely.insertInto('orders').values(this.#toRow(order)).execute();
  }

  async find(id: string, executor: Executor = this.db.kysely): Promise<Order | undefined> {
    const row = await executor.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirst();
    return row && this.#toOrder(row);
  }

  /**
   * The merchant's order of that id. Another merchant's is not read at all, so it takes as long to not
   * find as an id that does not exist: reading and decrypting it would tell the two apart by time.
   */
  async findOwned(merchantId: string, id: string): Promise<Order | undefined> {
    const row = await this.db.kysely
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchantId)
      .executeTakeFirst();
    return row && this.#toOrder(row);
  }

  /**
   * A page of the merchant's orders, newest first (by creation time, then id), after the order
   * `filter.after` names: one more is read than the page holds, and its presence is `hasMore`.
   */
  async listPage(merchantId: string, filter: OrderListFilter & { after?: Order }): Promise<OrderPage> {
    const { after } = filter;
    const rows = await this.db.kysely
      .selectFrom('orders')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status as OrderState))
      .$if(filter.merchantOrderId !== undefined, (q) =>
        q.where('merchant_order_id', '=', filter.merchantOrderId as string),
      )
      .$if(filter.createdSince !== undefined, (q) =>
        q.where('created_at', '>=', filter.createdSince as number),
      )
      .$if(filter.createdBefore !== undefined, (q) =>
        q.where('created_at', '<', filter.createdBefore as number),
      )
      // (created_at, id) < the cursor's, written so that `created_at <=` bounds the index's range scan.
      .$if(after !== undefined, (q) =>
        q
          .where('created_at', '<=', (after as Order).createdAt)
          .where((eb) =>
            eb.or([eb('created_at', '<', (after as Order).createdAt), eb('id', '<', (after as Order).id)]),
          ),
      )
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .execute();
    return {
      data: rows.slice(0, filter.limit).map((row) => this.#toOrder(row)),
      hasMore: rows.length > filter.limit,
    };
  }

  /** Writes `order` if the row is still in state `from`; false when another writer got there first. */
  async update(executor: Executor, order: Order, from: OrderState): Promise<boolean> {
    const { id: _id, created_at: _created, ...changes } = this.#toRow(order);
    const result = await executor
      .updateTable('orders')
      .set(changes)
      .where('id', '=', order.id)
      .where('status', '=', from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Orders the service was paying (not handed to the merchant's processor) that have had no decision
   * recorded since before `before`, oldest first: PROCESSING orders are few, and the (status, expires_at)
   * index finds them.
   */
  async stalledPayments(before: number, limit: number): Promise<Order[]> {
    const rows = await this.db.kysely
      .selectFrom('orders')
      .selectAll()
      .where('status', '=', 'PROCESSING')
      .where('session_id', 'is', null)
      .where('updated_at', '<', before)
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((row) => this.#toOrder(row));
  }

  /**
   * Moves a PROCESSING order's `updated_at` from `seen` to `now`; false when another writer changed the
   * order since `seen` was read.
   */
  async touchProcessing(id: string, seen: number, now: number): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('orders')
      .set({ updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'PROCESSING')
      .where('updated_at', '=', seen)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** How many of the merchant's payments the service is making and has no decision for yet. */
  async countPaying(merchantId: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number | string>().as('paying'))
      .where('merchant_id', '=', merchantId)
      .where('status', '=', 'PROCESSING')
      .where('session_id', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.paying);
  }

  /** Moves every `from` order whose `expires_at` has passed to `to`; returns how many. */
  async expire(from: OrderState, to: OrderState, now: number): Promise<number> {
    const result = await this.db.kysely
      .updateTable('orders')
      .set({ status: to, updated_at: now })
      .where('status', '=', from)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  #toRow(order: Order): OrdersTable {
    const { payment } = order;
    return {
      id: order.id,
      merchant_id: order.merchantId,
      merchant_order_id: order.merchantOrderId,
      origin: order.origin,
      status: order.status,
      currency: order.currency,
      line_items: JSON.stringify(order.lineItems),
      subtotal: order.subtotal,
      total: order.total,
      description: order.description,
      email: payment?.email ?? null,
      shopper_id: payment?.shopperId ?? null,
      payment_id: payment?.paymentId ?? null,
      shipping_address_id: payment?.shippingAddressId ?? null,
      billing_address_id: payment?.billingAddressId ?? null,
      shipping_method: payment?.shippingMethod ? JSON.stringify(payment.shippingMethod) : null,
      shipping_amount: payment?.shippingAmount ?? null,
      tax_amount: payment?.taxAmount ?? null,
      charged_amount: payment?.chargedAmount ?? null,
      transaction_details_ciphertext: order.transactionDetails
        ? this.keyRing.seal(
            JSON.stringify(order.transactionDetails),
            'orders.transaction_details_ciphertext',
            order.id,
          )
        : null,
      error_code: order.error?.code ?? null,
      error_message: order.error?.message ?? null,
      session_id: order.merchantAuthorization?.sessionId ?? null,
      external_response: order.merchantAuthorization?.externalResponse
        ? JSON.stringify(order.merchantAuthorization.externalResponse)
        : null,
      expires_at: order.expiresAt,
      created_at: order.createdAt,
      updated_at: order.updatedAt,
    };
  }

  #toOrder(row: OrdersTable): Order {
    const payment =
      row.payment_id === null || row.email === null
        ? null
        : {
            email: row.email,
            shopperId: row.shopper_id,
            paymentId: row.payment_id,
            shippingAddressId: row.shipping_address_id,
            billingAddressId: row.billing_address_id,
            shippingMethod: row.shipping_method === null ? null : JSON.parse(row.shipping_method),
            shippingAmount: row.shipping_amount ?? 0,
            taxAmount: row.tax_amount ?? 0,
            chargedAmount: row.charged_amount ?? 0,
          };
    return {
      id: row.id as OrderId,
      merchantId: row.merchant_id,
      merchantOrderId: row.merchant_order_id,
      origin: row.origin,
      status: row.status,
      currency: row.currency,
      lineItems: JSON.parse(row.line_items),
      subtotal: row.subtotal,
      total: row.total,
      description: row.description,
      payment,
      transactionDetails:
        row.transaction_details_ciphertext === null
          ? null
          : JSON.parse(
              this.keyRing.open(
                row.transaction_details_ciphertext,
                'orders.transaction_details_ciphertext',
                row.id,
              ),
            ),
      error: row.error_code === null ? null : { code: row.error_code, message: row.error_message },
      merchantAuthorization:
        row.session_id === null
          ? null
          : {
              sessionId: row.session_id,
              externalResponse: row.external_response === null ? null : JSON.parse(row.external_response),
            },
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}

/** The orders as stored, read only: for the operator's commands, which change none. */
export function orderRecords(
  db: Db,
  keyRing: KeyRing,
): Pick<OrdersRepo, 'find' | 'listPage' | 'countPaying'> {
  return new OrdersRepo(db, keyRing);
}
