import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
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
  '/sandbox/sessions',
  '/sandbox/messages?to=test.shopper@example.com',
  '/checkout/orders',
  '/checkout/shoppers/lookup',
  '/checkout/ord_x',
  '/orders/ord_x',
  '/sdk/wallet-sdk.js',
  '/checkout/api/orders/ord_x',
  '/checkout/api/orders/ord_x/otp',
  '/checkout/api/orders/ord_x/otp/verify',
  '/checkout/api/orders/ord_x/enrol',
  '/checkout/api/orders/ord_x/quote',
  '/checkout/api/orders/ord_x/pay',
  '/checkout/api/orders/ord_x/close',
  '/checkout/api/wallet',
  '/checkout/api/wallet/addresses',
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
];

/** Header values undici will send: visible ASCII and spaces, no leading or trailing space. */
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,60}[\x21-\x7e])?$/);

describe.each(engines())('the API under generated input on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let apiKey: string;
  let valid: Record<string, unknown>;
  let orderId: string;

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    const shop = await service.merchant({
      webhookUrl: receiver.url,
      allowedOrigins: ['https://shop.example'],
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
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
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
        expect(response.status, `${generated.method} ${generated.path} → ${response.text}`).toBeLessThan(500);
        // The checkout page is HTML for people, its error pages too; everything else answers JSON.
        const isPage = String(response.headers['content-type']).startsWith('text/html');
        if (response.status >= 400 && !isPage) {
          expect(Object.keys(response.json).sort()).toEqual(['errorCode', 'errorMessage']);
          expect(response.json.errorCode).toMatch(/^[A-Z_]+$/);
          expect(typeof response.json.errorMessage).toBe('string');
        }
      }),
      { numRuns: 1500 },
    );
  }, 120_000);

  it('answers generated values of the one field of POST /webhooks/messages/recover without a 5xx', async () => {
    // The broad property above seldom builds a body this route accepts the other parts of.
    const since = fc.oneof(
      fieldValue,
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.date({ noInvalidDate: false }).map((date) => String(date)),
    );
    await fc.assert(
      fc.asyncProperty(since, async (value) => {
        const response = await service.call('POST', '/webhooks/messages/recover', {
          apiKey,
          body: { since: value },
        });
        expect(response.status, `since: ${JSON.stringify(value)} → ${response.text}`).toBeLessThan(500);
        if (response.status !== 200) {
          expect(response.json).toEqual({
            errorCode: 'VALIDATION_ERROR',
            errorMessage: expect.stringContaining('since'),
          });
        }
      }),
      { numRuns: 300 },
    );
  });
});
