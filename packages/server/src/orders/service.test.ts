import { randomBytes } from 'node:crypto';
import type { Transaction } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../db/index.js';
import { DomainError } from '../errors.js';
import { type Merchant, Merchants } from '../merchants/index.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from '../vault/keyring.js';
import { insertMessages, newMessage, type WebhookMessageRow } from '../webhooks/index.js';
import { linkExternalResponse } from './repo.js';
import { DEFAULT_ORDER_LIFETIME_MS, Orders } from './service.js';
import type { ExternalResponseLink, PaymentAttempt, TransactionDetails } from './types.js';
import { toOrderView } from './view.js';

const ORIGIN = 'https://shop.example';

const PAYMENT: PaymentAttempt = {
  email: 'test.shopper@example.com',
  shopperId: 'shp_1',
  paymentId: '5b7c4a52-8d1e-4b8e-9d3e-1c2f3a4b5c6d',
  shippingAddressId: 'adr_1',
  billingAddressId: 'adr_1',
  shippingMethod: { externalId: 'ground', name: 'Ground', price: 500 },
  shippingAmount: 500,
  taxAmount: 206,
  chargedAmount: 3206,
};

const DETAILS: TransactionDetails = {
  networkTransactionId: '123456789012345',
  gatewayTransactionId: 'gw_42',
  gatewayResponse: { status: 'APPROVED', card: '4111111111111111' },
};

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe.each(engines())('orders on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let clock: number;
  let orders: Orders;
  let merchant: Merchant;
  let other: Merchant;
  let committed: WebhookMessageRow[];
  const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);

  beforeAll(async () => {
    handle = await openTestDb(engine);
    clock = 1_700_000_000_000;
    const merchants = new Merchants({ db: handle.db, keyRing, env: 'staging' });
    merchant = (await merchants.create({ name: 'Shop', allowedOrigins: [ORIGIN] }, TEST_ACTOR)).merchant;
    other = (await merchants.create({ name: 'Other', allowedOrigins: [ORIGIN] }, TEST_ACTOR)).merchant;
    orders = new Orders({
      db: handle.db,
      keyRing,
      outbox: {
        newMessage: (message, now) => newMessage(message, now, 30_000),
        insertMessages: (trx: Transaction<Database>, rows) => insertMessages(trx, rows),
      },
      dispatcher: { committed: (rows) => committed.push(...rows) },
      now: () => clock,
    });
  });
  beforeEach(() => {
    committed = [];
  });
  afterAll(() => handle.close());

  const create = (input: Record<string, unknown> = {}) =>
    orders.create(merchant, { lineItems: [{ SKU: 'TEE', amount: 2500 }], ...input }, ORIGIN);

  it('creates a CREATED order that derives missing amounts and lives an hour', async () => {
    const order = await create({ orderId: 'order-1001', orderDescription: 'A tee' });
    expect(order).toMatchObject({
      id: expect.stringMatching(/^ord_[0-9A-Za-z]{22}$/),
      merchantId: merchant.id,
      merchantOrderId: 'order-1001',
      origin: ORIGIN,
      status: 'CREATED',
      currency: 'USD',
      lineItems: [{ SKU: 'TEE', amount: 2500 }],
      subtotal: 2500,
      total: 2500,
      description: 'A tee',
      payment: null,
      transactionDetails: null,
      error: null,
      expiresAt: clock + DEFAULT_ORDER_LIFETIME_MS,
    });
    expect(await orders.get(merchant.id, order.id)).toEqual(order);
  });

  it("answers another merchant's order, and an unknown one, as ORDER_NOT_FOUND", async () => {
    const order = await create();
    for (const [merchantId, orderId] of [
      [other.id, order.id],
      [merchant.id, 'ord_nothing'],
    ] as const) {
      const error = await rejection(orders.get(merchantId, orderId));
      expect(error.errorCode).toBe('ORDER_NOT_FOUND');
      expect(error.message).toBe(`order ${orderId} was not found.`);
    }
  });

  it('refuses an origin the merchant has not allowed, and line items that add up past the limit', async () => {
    const origin = await rejection(orders.create(merchant, { lineItems: [] }, 'https://evil.example'));
    expect(origin.errorCode).toBe('ORIGIN_NOT_ALLOWED');
    const items = [
      { SKU: 'A', amount: 99_999_999 },
      { SKU: 'B', amount: 1 },
    ];
    const sum = await rejection(orders.create(merchant, { lineItems: items }, ORIGIN));
    expect(sum.message).toBe('the line item amounts add up to 100000000, more than 99999999 cents');
    const total = await rejection(create({ total: 100 }));
    expect(total.message).toBe('total 100 is less than subtotal 2500');
  });

  it('refuses an order that charges nothing, and an unpriced item without a subtotal', async () => {
    const empty = await rejection(orders.create(merchant, { lineItems: [] }, ORIGIN));
    expect([empty.errorCode, empty.message]).toEqual([
      'VALIDATION_ERROR',
      'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
    ]);
    const free = await rejection(create({ lineItems: [{ SKU: 'A', amount: 0 }], subtotal: 0 }));
    expect(free.message).toBe('subtotal must be at least 1 cent: an order must charge something');
    const unpriced = await rejection(
      create({ lineItems: [{ SKU: 'A', amount: 2500 }, { SKU: 'B' }], total: 3700 }),
    );
    expect(unpriced.message).toBe(
      'subtotal is required when a line item has no amount (lineItems[1].amount is missing)',
    );
    const priced = await create({ lineItems: [{ SKU: 'A', amount: 2500 }, { SKU: 'B' }], subtotal: 3700 });
    expect([priced.subtotal, priced.total]).toEqual([3700, 3700]);
  });

  it('pays: PROCESSING with the payment, then SUCCEEDED with an outbox message in the same commit', async () => {
    const order = await create();
    const processing = await orders.markProcessing(order.id, PAYMENT);
    expect(processing).toMatchObject({ status: 'PROCESSING', payment: PAYMENT });
    expect(committed).toEqual([]);

    clock += 1000;
    const succeeded = await orders.markSucceeded(order.id, DETAILS);
    expect(succeeded).toMatchObject({ status: 'SUCCEEDED', transactionDetails: DETAILS, updatedAt: clock });
    expect(committed).toHaveLength(1);
    expect(committed[0]).toMatchObject({
      merchant_id: merchant.id,
      event_name: 'ORDER_SUCCEEDED',
      subject_id: order.id,
      schedule: 'default',
    });
    const stored = await handle.db.kysely
      .selectFrom('webhook_messages')
      .selectAll()
      .where('subject_id', '=', order.id)
      .execute();
    expect(stored.map((row) => row.event_name)).toEqual(['ORDER_SUCCEEDED']);
    expect(await orders.get(merchant.id, order.id)).toEqual(succeeded);
  });

  it('keeps transaction details encrypted at rest, bound to the order', async () => {
    const order = await create();
    await orders.markProcessing(order.id, PAYMENT);
    await orders.markSucceeded(order.id, DETAILS);
    const row = await handle.db.kysely
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', order.id)
      .executeTakeFirstOrThrow();
    expect(row.transaction_details_ciphertext).toMatch(/^v2\.k1\./);
    expect(JSON.stringify(row)).not.toContain('4111111111111111');
    expect(() =>
      keyRing.open(
        row.transaction_details_ciphertext as string,
        'orders.transaction_details_ciphertext',
        'ord_other',
      ),
    ).toThrow();
  });

  it('fails with the code and a null message, and emits ORDER_FAILED', async () => {
    const order = await create();
    await orders.markProcessing(order.id, PAYMENT);
    const failed = await orders.markFailed(order.id, '-1', null);
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: '-1', message: null } });
    expect(committed.map((row) => row.event_name)).toEqual(['ORDER_FAILED']);
    expect((await orders.get(merchant.id, order.id)).error).toEqual({ code: '-1', message: null });
  });

  it('has one terminal outcome: a settled order takes no other, and nothing is emitted', async () => {
    const order = await create();
    await orders.markProcessing(order.id, PAYMENT);
    expect((await rejection(orders.abandon(order.id))).errorCode).toBe('ORDER_STATE_CONFLICT');
    await orders.markSucceeded(order.id, DETAILS);
    committed = [];
    for (const attempt of [
      () => orders.markFailed(order.id, '995', 'Unable to process card'),
      () => orders.markSucceeded(order.id, DETAILS),
      () => orders.markProcessing(order.id, PAYMENT),
      () => orders.abandon(order.id),
    ]) {
      const error = await rejection(attempt());
      expect(error.errorCode).toBe('ORDER_STATE_CONFLICT');
      expect(error.message).toMatch(new RegExp(`^order ${order.id} is SUCCEEDED; it cannot take `));
    }
    expect(committed).toEqual([]);
    expect((await orders.get(merchant.id, order.id)).status).toBe('SUCCEEDED');
  });

  it('lets only one of two racing outcomes win', async () => {
    const order = await create();
    await orders.markProcessing(order.id, PAYMENT);
    const results = await Promise.allSettled([
      orders.markSucceeded(order.id, DETAILS),
      orders.markFailed(order.id, '990', 'Card was declined'),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const messages = await handle.db.kysely
      .selectFrom('webhook_messages')
      .select('event_name')
      .where('subject_id', '=', order.id)
      .execute();
    expect(messages).toHaveLength(1);
  });

  it('abandons an order closed by the shopper', async () => {
    const order = await create();
    expect((await orders.abandon(order.id)).status).toBe('ABANDONED');
    expect(orders.isOpen(await orders.get(merchant.id, order.id))).toBe(false);
  });

  it('expires orders left open past their life, and refuses to pay them', async () => {
    const stale = await create();
    const paying = await create();
    await orders.markProcessing(paying.id, PAYMENT);
    clock += DEFAULT_ORDER_LIFETIME_MS - 1;
    const fresh = await create();
    clock += 1;

    expect(orders.isOpen(await orders.get(merchant.id, stale.id))).toBe(false);
    const refused = await rejection(orders.markProcessing(stale.id, PAYMENT));
    expect(refused.errorCode).toBe('ORDER_STATE_CONFLICT');
    expect(refused.message).toMatch(/expired at .*; create a new order\.$/);

    expect(await orders.expireDue()).toBeGreaterThanOrEqual(1);
    expect((await orders.get(merchant.id, stale.id)).status).toBe('ABANDONED');
    expect((await orders.get(merchant.id, paying.id)).status).toBe('PROCESSING');
    expect((await orders.get(merchant.id, fresh.id)).status).toBe('CREATED');
    expect(await orders.expireDue()).toBe(0);
  });

  describe('merchant authorization mode', () => {
    const SESSION = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const link = (amount: number): ExternalResponseLink => ({
      externalResponseId: `ext_${amount}`,
      pspHostName: 'own-processor',
      amount,
      currency: 'USD',
      isRecurring: false,
      reportedAt: clock,
    });
    const report = (target: { merchantId: string; sessionId: string; paymentId: string }, amount: number) =>
      handle.db.kysely.transaction().execute((trx) => linkExternalResponse(trx, target, link(amount)));

    it('a selection is PROCESSING with its session, never expires, and emits nothing', async () => {
      const order = await create();
      const selected = await orders.markSelected(order.id, PAYMENT, SESSION);
      expect(orders.isOpen(selected)).toBe(true);
      expect(selected).toMatchObject({
        status: 'PROCESSING',
        payment: PAYMENT,
        merchantAuthorization: { sessionId: SESSION, externalResponse: null },
      });
      expect(committed).toEqual([]);
      const again = await rejection(orders.markSelected(order.id, PAYMENT, SESSION));
      expect(again.errorCode).toBe('ORDER_STATE_CONFLICT');
      expect((await rejection(orders.abandon(order.id))).errorCode).toBe('ORDER_STATE_CONFLICT');

      const paying = await create();
      await orders.markProcessing(paying.id, PAYMENT);
      clock += DEFAULT_ORDER_LIFETIME_MS;
      await orders.expireDue();
      const later = await orders.get(merchant.id, order.id);
      expect(later.status).toBe('PROCESSING');
      // The checkout page closes at the usual end of life; a payment of the service's own stays open.
      expect(orders.isOpen(later)).toBe(false);
      expect(orders.isOpen(await orders.get(merchant.id, paying.id))).toBe(true);
      expect(toOrderView(later)).toMatchObject({
        status: 'PROCESSING',
        total: PAYMENT.chargedAmount,
        merchantAuthorization: { sessionId: SESSION, paymentId: PAYMENT.paymentId, externalResponse: null },
      });
    });

    it("links the merchant's external response to the order of that session and card only", async () => {
      const order = await create();
      await orders.markSelected(order.id, PAYMENT, SESSION);
      const target = { merchantId: merchant.id, sessionId: SESSION, paymentId: PAYMENT.paymentId };
      expect(await report({ ...target, merchantId: other.id }, 3206)).toBe(false);
      expect(await report({ ...target, paymentId: 'another-card' }, 3206)).toBe(false);
      expect(await report({ ...target, sessionId: 'another-session' }, 3206)).toBe(false);
      expect((await orders.get(merchant.id, order.id)).merchantAuthorization?.externalResponse).toBeNull();

      clock += 1_000;
      expect(await report(target, 3000)).toBe(true);
      clock += 1_000;
      expect(await report(target, 3206)).toBe(true);
      const linked = await orders.get(merchant.id, order.id);
      expect(linked.status).toBe('PROCESSING');
      expect(linked.updatedAt).toBe(clock);
      expect(toOrderView(linked).merchantAuthorization).toEqual({
        sessionId: SESSION,
        paymentId: PAYMENT.paymentId,
        externalResponse: {
          externalResponseId: 'ext_3206',
          pspHostName: 'own-processor',
          amount: 3206,
          currency: 'USD',
          isRecurring: false,
          reportedAt: new Date(clock).toISOString(),
        },
      });
    });

    it('leaves orders the service paid without merchantAuthorization', async () => {
      const order = await create();
      await orders.markProcessing(order.id, PAYMENT);
      const paid = await orders.markSucceeded(order.id, DETAILS);
      expect(paid.merchantAuthorization).toBeNull();
      expect(toOrderView(await orders.get(merchant.id, order.id)).merchantAuthorization).toBeNull();
    });
  });
});
