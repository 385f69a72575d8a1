import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { ORDER_LIMITS } from './orders.create.js';

const SHOP = 'https://shop.example';
const ORDER = {
  lineItems: [
    { SKU: 'TEE-M', name: 'T-shirt', amount: 2500, category: 'apparel' },
    { SKU: 'MUG', name: 'Mug', amount: 1200 },
  ],
  subtotal: 3700,
  total: 3700,
  orderId: 'order-1001',
  orderDescription: 'A tee and a mug',
  currencyCode: 'USD',
};

describe.each(engines())('POST /checkout/orders and /checkout/shoppers/lookup on %s', (engine) => {
  let service: TestService;
  let merchantId: string;

  const countOrders = async () =>
    Number(
      (
        await service.services.db.kysely
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const createOrder = (body: unknown, origin: string | null = SHOP) =>
    service.call('POST', '/checkout/orders', { body, headers: origin ? { origin } : {} });

  beforeAll(async () => {
    service = await startTestService(engine);
    ({ merchantId } = await service.merchant({ allowedOrigins: [SHOP, 'http://localhost:4001'] }));
  });
  afterAll(() => service.close());

  it('creates a CREATED order from an allowed origin and answers 201 { orderId } with CORS headers', async () => {
    const response = await createOrder({ merchantId, order: ORDER });
    expect(response.status).toBe(201);
    expect(response.json).toEqual({ orderId: expect.stringMatching(/^ord_[0-9A-Za-z]{22}$/) });
    expect(response.headers['access-control-allow-origin']).toBe(SHOP);
    expect(response.headers.vary).toBe('Origin');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();

    const order = await service.services.orders.find(response.json.orderId);
    expect(order).toMatchObject({
      merchantId,
      merchantOrderId: 'order-1001',
      origin: SHOP,
      status: 'CREATED',
      subtotal: 3700,
      total: 3700,
      currency: 'USD',
      description: 'A tee and a mug',
      lineItems: ORDER.lineItems,
    });
  });

  it('accepts an empty lineItems list with a subtotal', async () => {
    const response = await createOrder(
      { merchantId, order: { lineItems: [], subtotal: 2500 } },
      'http://localhost:4001',
    );
    expect(response.status).toBe(201);
    expect(await service.services.orders.find(response.json.orderId)).toMatchObject({
      subtotal: 2500,
      total: 2500,
    });
    expect(response.headers['access-control-allow-origin']).toBe('http://localhost:4001');
  });

  it.each([
    ['no order', (id: string) => ({ merchantId: id }), 'VALIDATION_ERROR', 'order is required'],
    ['no merchantId', () => ({ order: ORDER }), 'VALIDATION_ERROR', 'merchantId is required'],
    [
      'no lineItems',
      (id: string) => ({ merchantId: id, order: {} }),
      'VALIDATION_ERROR',
      'lineItems is required and must be an array (it may be empty)',
    ],
    [
      'sku in lower case',
      (id: string) => ({ merchantId: id, order: { lineItems: [{ sku: 'TEE' }] } }),
      'VALIDATION_ERROR',
      'lineItems[0].SKU is required and must be a non-empty string (the key is written in capitals: SKU)',
    ],
    [
      'dollars instead of cents',
      (id: string) => ({ merchantId: id, order: { lineItems: [{ SKU: 'TEE', amount: 25.99 }] } }),
      'VALIDATION_ERROR',
      'lineItems[0].amount must be an integer number of cents, got 25.99',
    ],
    [
      'a subtotal that is not the sum',
      (id: string) => ({ merchantId: id, order: { ...ORDER, subtotal: 3600 } }),
      'VALIDATION_ERROR',
      'subtotal 3600 is not the sum of the line item amounts (3700)',
    ],
    [
      'a total below the subtotal',
      (id: string) => ({ merchantId: id, order: { ...ORDER, total: 3000 } }),
      'VALIDATION_ERROR',
      'total 3000 is less than subtotal 3700',
    ],
    [
      'an order with nothing to charge',
      (id: string) => ({ merchantId: id, order: { lineItems: [] } }),
      'VALIDATION_ERROR',
      'subtotal must be at least 1 cent: left out, it is the sum of the line item amounts, here 0',
    ],
    [
      'amounts of 0',
      (id: string) => ({ merchantId: id, order: { lineItems: [{ SKU: 'TEE', amount: 0 }], subtotal: 0 } }),
      'VALIDATION_ERROR',
      'subtotal must be at least 1 cent: an order must charge something',
    ],
    [
      'an item without an amount and no subtotal',
      (id: string) => ({
        merchantId: id,
        order: { lineItems: [{ SKU: 'TEE', amount: 2500 }, { SKU: 'MUG' }], total: 3700 },
      }),
      'VALIDATION_ERROR',
      'subtotal is required when a line item has no amount (lineItems[1].amount is missing)',
    ],
    [
      'another currency',
      (id: string) => ({ merchantId: id, order: { ...ORDER, currencyCode: 'EUR' } }),
      'UNSUPPORTED_CURRENCY',
      'currencyCode must be one of USD, got "EUR"',
    ],
  ])(
    'refuses %s with 400 naming the field and the rule, creating nothing',
    async (_name, body, code, message) => {
      const before = await countOrders();
      const response = await createOrder(body(merchantId));
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errorCode: code, errorMessage: message });
      expect(response.headers['access-control-allow-origin']).toBe(SHOP);
      expect(await countOrders()).toBe(before);
    },
  );

  it.each([
    [
      'a disallowed origin',
      'https://evil.example',
      () => merchantId,
      /^Origin https:\/\/evil\.example is not an allowed origin of merchant mch_/,
    ],
    ['no origin', null, () => merchantId, /^The request has no Origin header/],
    [
      'an unknown merchant',
      SHOP,
      () => 'mch_unknown',
      /^Origin https:\/\/shop\.example is not an allowed origin of merchant mch_unknown; check that the merchant id is yours/,
    ],
  ])('refuses %s with 403 ORIGIN_NOT_ALLOWED and creates nothing', async (_name, origin, id, message) => {
    const before = await countOrders();
    const response = await createOrder({ merchantId: id(), order: ORDER }, origin);
    expect(response.status).toBe(403);
    expect(response.json.errorCode).toBe('ORIGIN_NOT_ALLOWED');
    expect(response.json.errorMessage).toMatch(message);
    expect(await countOrders()).toBe(before);
  });

  it('answers the CORS preflight for content-type POSTs', async () => {
    for (const path of ['/checkout/orders', '/checkout/shoppers/lookup']) {
      const response = await request(`${service.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: SHOP,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      await response.body.dump();
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(SHOP);
      expect(response.headers['access-control-allow-methods']).toBe('POST');
      expect(response.headers['access-control-allow-headers']).toBe('content-type');
      expect(response.headers['access-control-max-age']).toBe('7200');
      expect(response.headers.vary).toBe('Origin');
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('does not need an API key and ignores one', async () => {
    const response = await service.call('POST', '/checkout/orders', {
      apiKey: 'sk_test_nonsense',
      body: { merchantId, order: ORDER },
      headers: { origin: SHOP },
    });
    expect(response.status).toBe(201);
  });

  it('tells an allowed origin whether an email has a wallet', async () => {
    const lookup = (email: string, origin = SHOP, id = merchantId) =>
      service.call('POST', '/checkout/shoppers/lookup', {
        body: { merchantId: id, email },
        headers: { origin },
      });
    const known = await lookup(TEST_SHOPPER_EMAIL.toUpperCase());
    expect(known.status).toBe(200);
    expect(known.json).toEqual({ known: true });
    expect(known.headers['access-control-allow-origin']).toBe(SHOP);
    expect((await lookup('nobody@example.com')).json).toEqual({ known: false });

    const refused = await lookup(TEST_SHOPPER_EMAIL, 'https://evil.example');
    expect(refused.status).toBe(403);
    expect(refused.json.errorCode).toBe('ORIGIN_NOT_ALLOWED');
    expect((await lookup(TEST_SHOPPER_EMAIL, SHOP, 'mch_unknown')).status).toBe(403);

    const bad = await lookup('not-an-email');
    expect(bad.status).toBe(400);
    expect(bad.json.errorMessage).toMatch(/^email must match/);
  });

  it('holds one client address to 120 orders a minute, before its merchant is looked at, and no other', async () => {
    // Every 127.x.y.z address is this machine's loopback: one agent per address is one client per address.
    const [busy, other] = ['127.0.0.4', '127.0.0.5'].map((localAddress) => new Agent({ localAddress }));
    const post = async (client: Agent | undefined, body: unknown) => {
      const response = await request(`${service.url}/checkout/orders`, {
        method: 'POST',
        dispatcher: client,
        headers: { 'content-type': 'application/json', origin: SHOP },
        body: JSON.stringify(body),
      });
      return {
        status: response.statusCode,
        retryAfter: response.headers['retry-after'],
        json: (await response.body.json()) as Record<string, unknown>,
      };
    };
    try {
      for (let index = 0; index < ORDER_LIMITS.perClient; index++) {
        expect([index, (await post(busy, { merchantId, order: ORDER })).status]).toEqual([index, 201]);
      }
      const before = await countOrders();
      const refused = await post(busy, { merchantId, order: ORDER });
      expect([refused.status, refused.json.errorCode]).toEqual([429, 'RATE_LIMITED']);
      expect(refused.json.errorMessage).toBe(
        `Too many orders from this address (at most 120 in 60 s); retry in ${refused.retryAfter} s.`,
      );
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect((await post(busy, { merchantId: 'mch_unknown', order: ORDER })).status).toBe(429);
      expect(await countOrders()).toBe(before);
      expect((await post(other, { merchantId, order: ORDER })).status).toBe(201);
    } finally {
      await Promise.all([busy?.close(), other?.close()]);
    }
  });
});
