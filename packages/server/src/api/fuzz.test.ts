import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { engines } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../test-support/sandbox-gateway.js';
import { startTestService, type TestService } from '../test-support/service.js';

const PATHS = [
  '/payments/credentials',
  '/payment/credentials',
  '/payments/externalresponse',
  '/payment/externalresponse',
  '/payments/credentials/crq_x',
  '/webhooks/messages',
  '/webhooks/messages/msg_x',
  '/webhooks/messages/msg_x/resend',
  '/webhooks/messages/recover',
  '/webhooks/test',
  '/account',
  '/account/webhook-secret/rotate',
  '/sandbox/sessions',
  '/sandbox/messages?to=test.shopper@example.com',
  '/checkout/orders',
  '/checkout/shoppers/lookup',
  '/checkout/ord_x',
  '/orders/ord_x',
  '/sdk/wallet-sdk.js',
  '/sdk/latest.json',
  '/checkout/api/orders/ord_x',
  '/checkout/api/orders/ord_x/otp',
  '/checkout/api/orders/ord_x/otp/verify',
  '/checkout/api/orders/ord_x/enrol',
  '/checkout/api/orders/ord_x/quote',
  '/checkout/api/orders/ord_x/pay',
  '/checkout/api/orders/ord_x/close',
  '/checkout/api/wallet',
  '/checkout/api/wallet/addresses',
  '/checkout/api/wallet/addresses/1',
  '/checkout/api/wallet/addresses/2147483648',
  '/checkout/api/wallet/cards',
  '/checkout/api/wallet/cards/card_x',
  '/healthz',
  '/openapi.json',
];

const FIELDS = [
  'paymentId',
  'sessionId',
  'amount',
  'merchantReference',
  'currency',
  'pspRawResponse',
  'pspHostName',
  'isRecurring',
  'email',
  'since',
  'webhookUrl',
  'allowedOrigins',
  'rememberDevices',
  'overlapSeconds',
];

/** Header values undici will send: visible ASCII and spaces, no leading or trailing space. */
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,60}[\x21-\x7e])?$/);

describe.each(engines())('the API under generated input on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let apiKey: string;
  let valid: Record<string, unknown>;
  let orderId: string;
  let merchantId: string;
  let gateway: SandboxGatewayServer;
  /** The test shopper's first card and address, for the shopper's routes. */
  let card: string;
  let addressId: number;

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: gateway.url });
    receiver = await startReceiver();
    const shop = await service.merchant({
      webhookUrl: receiver.url,
      allowedOrigins: ['https://shop.example'],
      shippingMethods: [{ externalId: 'ground', name: 'Ground', price: 500 }],
      taxSettings: { ratesByState: { TX: 825 } },
    });
    const merchant = await service.services.merchants.get(shop.merchantId);
    // A real open order, so the checkout API's paths reach past the order look-up.
    const order = await service.services.orders.create(
      merchant as NonNullable<typeof merchant>,
      { lineItems: [{ SKU: 'A', amount: 100 }] },
      'https://shop.example',
    );
    orderId = order.id;
    apiKey = shop.apiKey;
    merchantId = shop.merchantId;
    const session = await service.session(apiKey);
    valid = {
      paymentId: session.paymentMethods[0]?.paymentId,
      sessionId: session.sessionId,
      amount: 1000,
      merchantReference: 'fuzz',
      currency: 'USD',
      pspRawResponse: '{}',
      pspHostName: 'psp',
      isRecurring: false,
    };
    const { token } = await signIn();
    const wallet = (
      await service.call('GET', '/checkout/api/wallet', { headers: { authorization: `Bearer ${token}` } })
    ).json;
    card = wallet.cards[0].paymentId;
    addressId = wallet.addresses[0].addressId;
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
    await gateway.close();
  });

  const fieldValue = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 3 }),
    fc.string({ minLength: 200, maxLength: 40_000 }),
    fc.string().map((text) => `${text}\u0000`),
  );

  const body = fc.oneof(
    fc.json().map((json) => json),
    // A valid body with a field nested past the 32 levels a body may have, up to depths that once
    // overflowed the stack further on (written as text: JSON.stringify itself would overflow).
    fc
      .integer({ min: 30, max: 8_000 })
      .map(
        (depth) => `${JSON.stringify(valid).slice(0, -1)},"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      ),
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc
      .record({
        drop: fc.subarray(FIELDS),
        set: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 3 }),
      })
      .map(({ drop, set }) => {
        const mutated: Record<string, unknown> = { ...valid, ...set };
        for (const field of drop) delete mutated[field];
        return JSON.stringify(mutated);
      }),
  );

  const path = fc.oneof(
    fc.constantFrom(...PATHS),
    fc.constantFrom(...PATHS).map((known) => `${known}%00`),
    fc.tuple(fc.constantFrom(...PATHS), fc.webSegment()).map(([base, segment]) => `${base}/${segment}`),
    fc.tuple(fc.constantFrom(...PATHS), fc.webQueryParameters()).map(([base, query]) => `${base}?${query}`),
    fc.webPath().map((generated) => generated || '/'),
  );

  const request = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
    path,
    body: fc.option(body, { nil: undefined }),
    contentType: fc.option(
      fc.constantFrom(
        'application/json',
        'text/plain',
        'application/json; charset=utf-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
      ),
      { nil: undefined },
    ),
    authorization: fc.oneof(
      fc.constant('valid'),
      fc.constant(undefined),
      headerValue.map((value) => `Bearer ${value}`),
      headerValue,
    ),
    idempotencyKey: fc.option(headerValue, { nil: undefined }),
  });

  it('never answers 5xx, and every rejection has the error shape', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (generated) => {
        const headers: Record<string, string> = {};
        if (generated.contentType) headers['content-type'] = generated.contentType;
        if (generated.authorization) {
          headers.authorization =
            generated.authorization === 'valid' ? `Bearer ${apiKey}` : generated.authorization;
        }
        if (generated.idempotencyKey) headers['idempotency-key'] = generated.idempotencyKey;
        const sendsBody = generated.body !== undefined && generated.method !== 'GET';
        const response = await service.call(
          generated.method as 'GET' | 'POST',
          encodeURI(decodeURI(generated.path)).replace('ord_x', orderId),
          {
            headers,
            ...(sendsBody ? { rawBody: generated.body } : {}),
          },
        );
        expectNoFault(response, `${generated.method} ${generated.path}`);
      }),
      { numRuns: 1500 },
    );
  }, 120_000);

  /** A new open order of the shop, so that a payment or a locked code in one run leaves the next alone. */
  const openOrder = async () => {
    const merchant = await service.services.merchants.get(merchantId);
    const order = await service.services.orders.create(
      merchant as NonNullable<typeof merchant>,
      { lineItems: [{ SKU: 'A', amount: 100 }] },
      'https://shop.example',
    );
    return order.id;
  };
  /** The test shopper signed in to a new order: the order's id and the shopper token. */
  const signIn = async () => {
    const order = await openOrder();
    const email = TEST_SHOPPER_EMAIL;
    await service.call('POST', `/checkout/api/orders/${order}/otp`, { body: { email } });
    const verified = await service.call('POST', `/checkout/api/orders/${order}/otp/verify`, {
      body: { email, code: '123456' },
    });
    if (verified.status !== 200) throw new Error(`sign-in: ${verified.status} ${verified.text}`);
    return { order, token: verified.json.shopperToken as string };
  };

  let enrolments = 0;
  const address = {
    address1: '1 Main St',
    city: 'Austin',
    state: 'TX',
    zip: '78701',
    country: 'US',
  };
  /**
   * The routes that take a JSON body, each with one it accepts: the property above seldom builds a body
   * that gets past a route's other checks to the field it changed, so this one starts from these.
   * `ORDER` in a path of the shopper's routes stands for a new order the test shopper is signed in to.
   */
  const routes = (): { path: string; body: Record<string, unknown>; shopper?: true }[] => [
    { path: '/payments/credentials', body: valid },
    { path: '/payments/externalresponse', body: valid },
    { path: '/webhooks/messages/recover', body: { since: new Date().toISOString() } },
    { path: '/sandbox/sessions', body: { email: TEST_SHOPPER_EMAIL } },
    { path: '/checkout/orders', body: { merchantId, order: { lineItems: [{ SKU: 'A', amount: 100 }] } } },
    { path: '/checkout/shoppers/lookup', body: { merchantId, email: TEST_SHOPPER_EMAIL } },
    { path: `/checkout/api/orders/${orderId}/otp`, body: { email: TEST_SHOPPER_EMAIL } },
    {
      path: `/checkout/api/orders/${orderId}/otp/verify`,
      body: { email: TEST_SHOPPER_EMAIL, code: '123456' },
    },
    {
      path: `/checkout/api/orders/${orderId}/enrol`,
      body: {
        // A new email each time: the code sent to one may be asked for again only after 30 s.
        email: `new.shopper.${enrolments++}@example.com`,
        firstName: 'New',
        lastName: 'Shopper',
        phone: '+15125550199',
        card: { number: '4111 1111 1111 1111', expMonth: 12, expYear: 2040, cvv: '123' },
        billingAddress: address,
      },
    },
    {
      path: '/checkout/api/orders/ORDER/quote',
      body: { paymentId: card, shippingAddressId: addressId, shippingMethodId: 'ground' },
      shopper: true,
    },
    {
      path: '/checkout/api/orders/ORDER/pay',
      body: { paymentId: card, shippingAddressId: addressId, shippingMethodId: 'ground', cvv: '123' },
      shopper: true,
    },
    {
      path: '/checkout/api/wallet/cards',
      body: {
        number: '4242 4242 4242 4242',
        expMonth: 12,
        expYear: 2040,
        nameOnCard: 'Taylor Shopper',
        billingAddressId: addressId,
      },
      shopper: true,
    },
    {
      path: '/checkout/api/wallet/addresses',
      body: {
        firstName: 'Taylor',
        lastName: 'Shopper',
        ...address,
        phoneNumber: null,
        isDefaultShipping: false,
      },
      shopper: true,
    },
  ];

  it("never answers 5xx to generated values of each route's own fields, nested ones too", async () => {
    const value = fc.oneof(
      fieldValue,
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.date({ noInvalidDate: false }).map((date) => String(date)),
      // Values at the edges of what the schemas allow, which get past validation to the domain's checks.
      fc.constantFrom(0, 1, -1, 12, 13, 2_147_483_647, 2_147_483_648, Number.MAX_SAFE_INTEGER, 1e21),
      fc.constantFrom('', ' ', '0', '123', '123456', 'USD', 'usd', 'ground', 'a@b', TEST_SHOPPER_EMAIL),
    );
    const changes = fc.integer({ min: 0, max: routes().length - 1 }).chain((index) => {
      const paths = pathsOf(routes()[index]?.body ?? {});
      return fc.record({
        index: fc.constant(index),
        set: fc.dictionary(fc.constantFrom(...paths), value, { minKeys: 1, maxKeys: 2 }),
        drop: fc.subarray(paths, { maxLength: 1 }),
      });
    });
    await fc.assert(
      fc.asyncProperty(changes, async ({ index, set, drop }) => {
        const route = routes()[index] as ReturnType<typeof routes>[number];
        const body = structuredClone(route.body);
        for (const [path, generated] of Object.entries(set)) change(body, path, { value: generated });
        for (const path of drop) change(body, path, 'drop');
        let path = route.path;
        let headers: Record<string, string> = { origin: 'https://shop.example' };
        if (route.shopper) {
          const { order, token } = await signIn();
          path = path.replace('ORDER', order);
          headers = { authorization: `Bearer ${token}` };
        }
        const response = await service.call('POST', path, {
          ...(route.shopper ? {} : { apiKey }),
          headers,
          body,
        });
        expectNoFault(response, `POST ${path} ${JSON.stringify(body).slice(0, 200)}`);
      }),
      { numRuns: 1200 },
    );
  }, 240_000);
});

/** Every path into `body`, dotted: `card`, `card.number`, `order.lineItems.0.amount`… */
function pathsOf(body: unknown, prefix = ''): string[] {
  if (body === null || typeof body !== 'object') return [];
  return Object.entries(body).flatMap(([key, inner]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...pathsOf(inner, path)];
  });
}

/** Sets or drops the value at a dotted path; a path through something no longer an object is left alone. */
function change(body: Record<string, unknown>, path: string, to: { value: unknown } | 'drop'): void {
  const keys = path.split('.');
  const last = keys.pop() as string;
  let parent: unknown = body;
  for (const key of keys) parent = (parent as Record<string, unknown> | null)?.[key];
  if (parent === null || typeof parent !== 'object') return;
  if (to !== 'drop') (parent as Record<string, unknown>)[last] = to.value;
  else if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, unknown>)[last];
}

/** No 5xx, and every rejection but an HTML page's in the error shape. */
function expectNoFault(
  response: { status: number; headers: Record<string, unknown>; json: unknown; text: string },
  what: string,
): void {
  expect(response.status, `${what} → ${response.text}`).toBeLessThan(500);
  // The checkout page is HTML for people, its error pages too; everything else answers JSON.
  const isPage = String(response.headers['content-type']).startsWith('text/html');
  if (response.status >= 400 && !isPage) {
    const error = response.json as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(['errorCode', 'errorMessage']);
    expect(error.errorCode).toMatch(/^[A-Z_]+$/);
    expect(typeof error.errorMessage).toBe('string');
  }
}
