import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentAttempt } from '../../orders/index.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';

const DATE_TIME_RULE = 'must be a date-time with its time zone, such as 2026-11-29T00:00:00Z (RFC 3339)';
const SHOP = 'https://shop.example';
const PAYMENT: PaymentAttempt = {
  email: 'test.shopper@example.com',
  shopperId: null,
  paymentId: '5b7c4a52-8d1e-4b8e-9d3e-1c2f3a4b5c6d',
  shippingAddressId: null,
  billingAddressId: 'adr_1',
  shippingMethod: null,
  shippingAmount: 0,
  taxAmount: 0,
  chargedAmount: 2500,
};

describe.each(engines())('GET /orders on %s', (engine) => {
  let service: TestService;
  let shop: { merchantId: string; apiKey: string };
  let other: { merchantId: string; apiKey: string };
  /** The shop's orders, oldest first: `order-1` … `order-5`. */
  const created: string[] = [];

  const createOrder = async (merchantId: string, orderId: string): Promise<string> => {
    const response = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }], orderId } },
      headers: { origin: SHOP },
    });
    expect(response.status).toBe(201);
    return response.json.orderId;
  };
  const list = (query: string, apiKey = shop.apiKey) => service.call('GET', `/orders${query}`, { apiKey });
  const ids = (response: { json: { data: { orderId: string }[] } }) =>
    response.json.data.map((order) => order.orderId);

  beforeAll(async () => {
    service = await startTestService(engine);
    shop = await service.merchant({ allowedOrigins: [SHOP] });
    other = await service.merchant({ allowedOrigins: [SHOP] });
    for (let n = 1; n <= 5; n++) created.push(await createOrder(shop.merchantId, `order-${n}`));
    await createOrder(other.merchantId, 'order-1');
    const [first, second] = created as [string, string];
    await service.services.orders.markProcessing(first, PAYMENT);
    await service.services.orders.markSucceeded(first, {
      networkTransactionId: null,
      gatewayTransactionId: 'gw_1',
      gatewayResponse: { status: 'APPROVED' },
    });
    await service.services.orders.markProcessing(second, PAYMENT);
    await service.services.orders.markFailed(second, '990', 'Card was declined');
  });
  afterAll(async () => {
    await service.close();
  });

  it('lists the merchant’s orders newest first, each as GET /orders/{orderId} answers it, a page at a time', async () => {
    const whole = await list('');
    expect(whole.status).toBe(200);
    expect(whole.json.hasMore).toBe(false);
    expect([...ids(whole)].sort()).toEqual([...created].sort());
    // Newest first (orders made in the same millisecond follow their ids, in the database's collation).
    const times = whole.json.data.map((order: { createdAt: string }) => order.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    for (const order of whole.json.data) {
      expect(order).toEqual(
        (await service.call('GET', `/orders/${order.orderId}`, { apiKey: shop.apiKey })).json,
      );
    }

    const pages: string[][] = [];
    let cursor = '';
    for (;;) {
      const page = await list(`?limit=2${cursor}`);
      expect(page.status).toBe(200);
      pages.push(ids(page));
      if (!page.json.hasMore) break;
      cursor = `&startingAfter=${page.json.data.at(-1).orderId}`;
    }
    const newestFirst = ids(whole);
    expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
  });

  it('narrows the list by status, by merchantOrderId and by when the orders were created', async () => {
    const [first, second, third] = created as [string, string, string];
    expect(ids(await list('?status=SUCCEEDED'))).toEqual([first]);
    expect(ids(await list('?status=FAILED'))).toEqual([second]);
    const open = ids(await list('?status=CREATED'));
    expect([...open].sort()).toEqual(created.slice(2).sort());
    expect(ids(await list('?status=CREATED&limit=2'))).toEqual(open.slice(0, 2));
    expect(ids(await list('?merchantOrderId=order-3'))).toEqual([third]);
    expect(ids(await list('?merchantOrderId=order-9'))).toEqual([]);

    const createdAt = (await service.call('GET', `/orders/${third}`, { apiKey: shop.apiKey })).json.createdAt;
    const since = ids(await list(`?createdSince=${encodeURIComponent(createdAt)}`));
    const before = ids(await list(`?createdBefore=${encodeURIComponent(createdAt)}`));
    // Each order is on exactly one side of its own creation time.
    expect(since).toContain(third);
    expect(before).not.toContain(third);
    expect([...since, ...before].sort()).toEqual([...created].sort());
    expect(ids(await list('?createdBefore=2000-01-01T00:00:00Z'))).toEqual([]);
  });

  it('shows a merchant only its own orders, and refuses another merchant’s order as the cursor', async () => {
    const theirs = await list('', other.apiKey);
    expect(theirs.json.data.map((order: { merchantOrderId: string }) => order.merchantOrderId)).toEqual([
      'order-1',
    ]);
    const foreignCursor = await list(`?startingAfter=${created[0]}`, other.apiKey);
    expect([foreignCursor.status, foreignCursor.json]).toEqual([
      404,
      { errorCode: 'ORDER_NOT_FOUND', errorMessage: `startingAfter: order ${created[0]} was not found.` },
    ]);
    const anonymous = await service.call('GET', '/orders');
    expect([anonymous.status, anonymous.json.errorCode]).toEqual([401, 'UNAUTHORIZED']);
  });

  it('refuses a bad query with 400 naming the parameter and the rule', async () => {
    for (const [query, message] of [
      [
        '?status=PAID',
        'query parameter status must be one of CREATED, PROCESSING, SUCCEEDED, FAILED, ABANDONED',
      ],
      ['?limit=0', 'query parameter limit must be at least 1'],
      ['?limit=101', 'query parameter limit must be at most 100'],
      ['?createdSince=yesterday', `query parameter createdSince ${DATE_TIME_RULE}`],
      ['?createdSince=2026-11-29T00:00:00', `query parameter createdSince ${DATE_TIME_RULE}`],
      ['?page=2', 'query parameter page is not one this route takes'],
    ] as const) {
      const refused = await list(query);
      expect([query, refused.status, refused.json]).toEqual([
        query,
        400,
        { errorCode: 'VALIDATION_ERROR', errorMessage: message },
      ]);
    }
  });
});
