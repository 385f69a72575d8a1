import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OrderEventPayload, PaymentAttempt } from '../../orders/index.js';
import { engines } from '../../test-support/db.js';
import { webhookSchemaErrors } from '../../test-support/openapi.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { startTestService, type TestService } from '../../test-support/service.js';

const SHOP = 'https://shop.example';
const ORDER = {
  lineItems: [{ SKU: 'TEE-M', name: 'T-shirt', amount: 2500, category: 'apparel' }],
  subtotal: 2500,
  orderId: 'order-1001',
};
const PAYMENT: PaymentAttempt = {
  email: 'test.shopper@example.com',
  shopperId: null,
  paymentId: '5b7c4a52-8d1e-4b8e-9d3e-1c2f3a4b5c6d',
  shippingAddressId: 'adr_1',
  billingAddressId: 'adr_1',
  shippingMethod: { externalId: 'ground', name: 'Ground', price: 500 },
  shippingAmount: 500,
  taxAmount: 206,
  chargedAmount: 3206,
};
const DETAILS = {
  networkTransactionId: null,
  gatewayTransactionId: 'gw_42',
  gatewayResponse: '<response><status>APPROVED</status></response>',
};

describe.each(engines())('GET /orders/{orderId} and order webhooks on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string; webhookSecret: string };
  let other: { apiKey: string };

  const createOrder = async (order: unknown = ORDER): Promise<string> => {
    const response = await service.call('POST', '/checkout/orders', {
      body: { merchantId: shop.merchantId, order },
      headers: { origin: SHOP },
    });
    expect(response.status).toBe(201);
    return response.json.orderId;
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    shop = await service.merchant({ allowedOrigins: [SHOP], webhookUrl: receiver.url });
    other = await service.merchant({ allowedOrigins: [SHOP] });
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it("returns a new order to its merchant, with the merchant's id as merchantOrderId", async () => {
    const orderId = await createOrder();
    const response = await service.call('GET', `/orders/${orderId}`, { apiKey: shop.apiKey });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      orderId,
      merchantOrderId: 'order-1001',
      status: 'CREATED',
      currency: 'USD',
      lineItems: ORDER.lineItems,
      subtotal: 2500,
      total: 2500,
      description: null,
      email: null,
      shipping: null,
      taxes: null,
      transactionDetails: null,
      error: null,
      merchantAuthorization: null,
      expiresAt: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(Date.parse(response.json.expiresAt) - Date.parse(response.json.createdAt)).toBe(60 * 60_000);
    // An order is the merchant's own: no browser or proxy cache keeps it.
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it("answers another merchant's order and an unknown id as 404 ORDER_NOT_FOUND, and needs a key", async () => {
    const orderId = await createOrder();
    const stranger = await service.call('GET', `/orders/${orderId}`, { apiKey: other.apiKey });
    expect(stranger.status).toBe(404);
    expect(stranger.json).toEqual({
      errorCode: 'ORDER_NOT_FOUND',
      errorMessage: `order ${orderId} was not found.`,
    });
    const unknown = await service.call('GET', '/orders/ord_nothing', { apiKey: shop.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.json.errorCode).toBe('ORDER_NOT_FOUND');
    const anonymous = await service.call('GET', `/orders/${orderId}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.errorCode).toBe('UNAUTHORIZED');
  });

  it('delivers a signed ORDER_SUCCEEDED webhook and shows the paid order', async () => {
    const orderId = await createOrder();
    await service.services.orders.markProcessing(orderId, PAYMENT);
    const delivered = receiver.nth(receiver.received.length + 1);
    await service.services.orders.markSucceeded(orderId, DETAILS);
    const webhook = await delivered;

    const payload = verifiedBody<OrderEventPayload>(shop.webhookSecret, webhook);
    expect(webhook.headers['webhook-id']).toMatch(/^msg_/);
    const order = await service.call('GET', `/orders/${orderId}`, { apiKey: shop.apiKey });
    expect(order.status).toBe(200);
    expect(order.json).toMatchObject({
      orderId,
      merchantOrderId: 'order-1001',
      status: 'SUCCEEDED',
      subtotal: 2500,
      total: 3206,
      email: 'test.shopper@example.com',
      shipping: {
        addressId: 'adr_1',
        method: { externalId: 'ground', name: 'Ground', price: 500 },
        amount: 500,
      },
      taxes: 206,
      transactionDetails: DETAILS,
      error: null,
    });
    expect(payload).toEqual({ eventName: 'ORDER_SUCCEEDED', merchantId: shop.merchantId, ...order.json });
    expect(await webhookSchemaErrors(service, 'ORDER_SUCCEEDED', payload)).toEqual([]);
  });

  it('delivers a signed ORDER_FAILED webhook with the error code and message', async () => {
    const orderId = await createOrder({ lineItems: [], subtotal: 2500 });
    await service.services.orders.markProcessing(orderId, {
      ...PAYMENT,
      shippingMethod: null,
      shippingAddressId: null,
    });
    const delivered = receiver.nth(receiver.received.length + 1);
    await service.services.orders.markFailed(orderId, '990', 'Card was declined');
    const payload = verifiedBody<OrderEventPayload>(shop.webhookSecret, await delivered);
    expect(payload).toMatchObject({
      eventName: 'ORDER_FAILED',
      merchantId: shop.merchantId,
      orderId,
      merchantOrderId: null,
      status: 'FAILED',
      shipping: null,
      transactionDetails: null,
      error: { errorCode: '990', errorMessage: 'Card was declined' },
    });
    expect(await webhookSchemaErrors(service, 'ORDER_FAILED', payload)).toEqual([]);
  });
});
