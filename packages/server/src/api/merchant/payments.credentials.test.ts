import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../audit/index.js';
import type { CredentialEntry, PaymentCredentialsPayload } from '../../payments/types.js';
import { TEST_ACTOR } from '../../test-support/actor.js';
import { engines } from '../../test-support/db.js';
import { webhookSchemaErrors } from '../../test-support/openapi.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../../test-support/service.js';
import { until } from '../../test-support/wait.js';
import { passesLuhn } from '../../vault/vault.js';

const VISA_PAN = '4111111111111111';

describe.each(engines())('POST /payments/credentials on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string; webhookSecret: string };
  let session: Awaited<ReturnType<TestService['session']>>;
  let visa: string;

  const body = (overrides: Record<string, unknown> = {}) => ({
    paymentId: visa,
    sessionId: session.sessionId,
    amount: 2599,
    merchantReference: 'order-1001',
    currency: 'USD',
    ...overrides,
  });

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url });
    session = await service.session(shop.apiKey);
    visa = session.paymentMethods.find((method) => method.last4CardNumber === '1111')?.paymentId as string;
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('acknowledges, then delivers a signed PAYMENT_CREDENTIALS webhook exactly as the interface says', async () => {
    const delivered = receiver.nth(receiver.received.length + 1);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body(),
    });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ code: 200, message: 'OK', requestId: expect.stringMatching(/^crq_/) });
    expect(response.headers['request-id']).toMatch(/^req_/);

    const webhook = await delivered;
    const payload = verifiedBody<PaymentCredentialsPayload>(shop.webhookSecret, webhook);
    expect(Object.keys(payload).sort()).toEqual(
      [
        'billingAddress',
        'cardDetails',
        'credentials',
        'eventName',
        'merchantId',
        'merchantReference',
        'paymentId',
      ].sort(),
    );
    expect(payload).toMatchObject({
      eventName: 'PAYMENT_CREDENTIALS',
      paymentId: visa,
      merchantId: shop.merchantId,
      merchantReference: 'order-1001',
      cardDetails: { networkType: 'visa' },
    });
    expect(Object.keys(payload.billingAddress).sort()).toEqual(
      ['address1', 'city', 'country', 'firstName', 'lastName', 'phoneNumber', 'state', 'zipCode'].sort(),
    );
    for (const value of Object.values(payload.billingAddress)) expect(typeof value).toBe('string');
    expect(await webhookSchemaErrors(service, 'PAYMENT_CREDENTIALS', payload)).toEqual([]);
    expect(
      await webhookSchemaErrors(service, 'PAYMENT_CREDENTIALS', { ...payload, cardDetails: {} }),
    ).toEqual(["/cardDetails must have required property 'networkType'"]);

    const [token, pan] = payload.credentials as [
      Extract<CredentialEntry, { type: 'NETWORK_TOKEN' }>,
      Extract<CredentialEntry, { type: 'PAN' }>,
    ];
    expect(token.type).toBe('NETWORK_TOKEN');
    expect(Object.keys(token).sort()).toEqual(['cvv', 'expirationMonth', 'expirationYear', 'token', 'type']);
    expect(token.token).toMatch(/^4\d{15}$/);
    expect(token.token).not.toBe(VISA_PAN);
    expect(passesLuhn(token.token)).toBe(true);
    expect(token.cvv).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(token.expirationMonth).toMatch(/^\d{2}$/);
    expect(token.expirationYear).toMatch(/^\d{4}$/);
    expect(pan).toEqual({
      type: 'PAN',
      pan: VISA_PAN,
      expirationMonth: '12',
      expirationYear: expect.stringMatching(/^\d{4}$/),
    });

    const lookup = await until(async () => {
      const found = await service.call('GET', `/payments/credentials/${response.json.requestId}`, {
        apiKey: shop.apiKey,
      });
      return found.json.state === 'DELIVERED' && found;
    });
    expect(lookup.json).toMatchObject({ amount: 2599, merchantReference: 'order-1001', failureReason: null });
    expect(lookup.json.webhook.attempts).toEqual([
      { attemptedAt: expect.any(String), statusCode: 200, latencyMs: expect.any(Number), error: null },
    ]);
    expect(lookup.text).not.toContain(VISA_PAN);
    expect(lookup.text).not.toContain(token.token);
  });

  it('sends only a network token to a NETWORK_TOKEN-only merchant', async () => {
    const tokenOnly = await service.merchant({
      webhookUrl: receiver.url,
      credentialTypes: ['NETWORK_TOKEN'],
    });
    const own = await service.session(tokenOnly.apiKey);
    const next = receiver.next();
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: tokenOnly.apiKey,
      body: body({ sessionId: own.sessionId, paymentId: own.paymentMethods[0]?.paymentId }),
    });
    expect(response.status).toBe(200);
    const payload = JSON.parse((await next).body);
    expect(payload.credentials).toHaveLength(1);
    expect(payload.credentials[0].type).toBe('NETWORK_TOKEN');
  });

  it('refuses an unapproved merchant and sends nothing', async () => {
    const unapproved = await service.merchant({ webhookUrl: receiver.url, credentialTypes: [] });
    const own = await service.session(unapproved.apiKey);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: unapproved.apiKey,
      body: body({ sessionId: own.sessionId }),
    });
    expect(response.status).toBe(403);
    expect(response.json).toEqual({
      errorCode: 'MERCHANT_NOT_APPROVED',
      errorMessage:
        "This merchant account is not approved for the credentials flow: the service's operator approves it, choosing NETWORK_TOKEN, PAN or both.",
    });
    const messages = await service.services.webhooks.list(unapproved.merchantId);
    expect(messages).toEqual([]);
  });

  it('refuses a merchant without a webhook URL', async () => {
    const nowhere = await service.merchant({});
    const own = await service.session(nowhere.apiKey);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: nowhere.apiKey,
      body: body({ sessionId: own.sessionId }),
    });
    expect(response.status).toBe(422);
    expect(response.json).toEqual({
      errorCode: 'WEBHOOK_URL_NOT_CONFIGURED',
      errorMessage:
        "This merchant account has no webhook URL for the credentials to go to: the service's operator sets it.",
    });
  });

  it('answers a request without a body by saying what to send', async () => {
    const response = await service.call('POST', '/payments/credentials', { apiKey: shop.apiKey });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'body is required: send a JSON object with Content-Type: application/json',
    });
  });

  it.each(['paymentId', 'sessionId', 'amount', 'merchantReference', 'currency'])(
    'answers 400 naming a missing %s',
    async (field) => {
      const incomplete: Record<string, unknown> = body();
      delete incomplete[field];
      const response = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: incomplete,
      });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errorCode: 'VALIDATION_ERROR', errorMessage: `${field} is required` });
    },
  );

  it.each([
    ['paymentId', 123, 'paymentId must be a string'],
    ['sessionId', null, 'sessionId must be a string'],
    ['amount', '2599', 'amount must be an integer'],
    ['amount', 25.99, 'amount must be an integer'],
    ['amount', 0, 'amount must be at least 1'],
    ['amount', 100_000_000, 'amount must be at most 99999999'],
    ['merchantReference', '', 'merchantReference must not be empty'],
    ['merchantReference', 'x'.repeat(129), 'merchantReference must be at most 128 characters long'],
    ['currency', 'U'.repeat(17), 'currency must be at most 16 characters long'],
    ['currency', 7, 'currency must be a string'],
  ])('answers 400 for %s = %j', async (field, value, message) => {
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body({ [field]: value }),
    });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errorCode: 'VALIDATION_ERROR', errorMessage: message });
  });

  it.each(['EUR', 'usd', ''])('supports USD only, so refuses %j', async (currency) => {
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body({ currency }),
    });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errorCode: 'UNSUPPORTED_CURRENCY',
      errorMessage: `currency must be one of USD, got ${JSON.stringify(currency)}`,
    });
  });

  it.each([
    ['no header', undefined],
    ['an unknown key', 'Bearer sk_test_unknownunknownunknownunknown12'],
    ['a malformed header', 'Basic abc'],
  ])('answers 401 for %s', async (_name, authorization) => {
    const headers: Record<string, string> = authorization ? { authorization } : {};
    const response = await service.call('POST', '/payments/credentials', { body: body(), headers });
    expect(response.status).toBe(401);
    expect(response.json.errorCode).toBe('UNAUTHORIZED');
  });

  it('answers 401 for a revoked key', async () => {
    const { id, apiKey } = await service.services.merchants.createApiKey(shop.merchantId, TEST_ACTOR);
    expect((await service.call('POST', '/payments/credentials', { apiKey, body: body() })).status).toBe(200);
    await service.services.merchants.revokeApiKey(id, TEST_ACTOR);
    const response = await service.call('POST', '/payments/credentials', { apiKey, body: body() });
    expect(response.status).toBe(401);
  });

  it("answers another merchant's session and card as not found", async () => {
    const other = await service.merchant({ webhookUrl: receiver.url });
    const theirs = await service.session(other.apiKey);
    const wrongSession = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body({ sessionId: theirs.sessionId }),
    });
    expect(wrongSession.status).toBe(404);
    expect(wrongSession.json.errorCode).toBe('SESSION_NOT_FOUND');

    const stranger = await service.services.wallet.createShopper({
      email: `s${Date.now()}@example.com`,
      firstName: 'S',
      lastName: 'T',
    });
    const address = await service.services.wallet.addAddress(stranger.id, {
      firstName: 'S',
      lastName: 'T',
      address1: '1 Main St',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
    });
    const card = await service.services.wallet.addCard({
      shopperId: stranger.id,
      pan: '5555555555554444',
      expMonth: 1,
      expYear: new Date().getFullYear() + 2,
      nameOnCard: 'S T',
      billingAddressId: address.id,
    });
    const wrongCard = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body({ paymentId: card.id }),
    });
    expect(wrongCard.status).toBe(404);
    expect(wrongCard.json.errorCode).toBe('PAYMENT_METHOD_NOT_FOUND');
  });

  it('refuses an expired session', async () => {
    const shopper = await service.services.wallet.findShopperByEmail('test.shopper@example.com');
    const stale = await service.services.sessions.create({
      merchantId: shop.merchantId,
      shopperId: shopper?.id as string,
      ttlSeconds: 10,
      now: new Date(Date.now() - 60_000),
    });
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: body({ sessionId: stale.id }),
    });
    expect(response.status).toBe(422);
    expect(response.json.errorCode).toBe('SESSION_EXPIRED');
  });

  it('retries a receiver that answers 500 with the same webhook-id', async () => {
    // A receiver of its own: a late webhook of an earlier test would otherwise take the 500 or a place.
    const own = await startReceiver();
    const retrying = await service.merchant({ webhookUrl: own.url });
    own.respondWith(500);
    const second = own.nth(2);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: retrying.apiKey,
      body: credentialsBody(await service.session(retrying.apiKey), { merchantReference: 'retry-1' }),
    });
    expect(response.status).toBe(200);
    const retried = await second;
    const first = own.received[0];
    expect(retried.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(retried.body).toBe(first?.body);
    const view = await until(async () => {
      const lookup = await service.call('GET', `/payments/credentials/${response.json.requestId}`, {
        apiKey: retrying.apiKey,
      });
      return lookup.json.webhook.attempts.length === 2 && lookup.json;
    });
    expect(view.state).toBe('DELIVERED');
    expect(view.webhook.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([
      500, 200,
    ]);
    await own.close();
  });

  it('delivers to a receiver that was down once it is up, and marks abandoned deliveries FAILED', async () => {
    const down = await startReceiver();
    const port = down.port;
    await down.close();
    const late = await service.merchant({ webhookUrl: `http://127.0.0.1:${port}/webhooks` });
    const own = await service.session(late.apiKey);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: late.apiKey,
      body: body({
        sessionId: own.sessionId,
        paymentId: own.paymentMethods[0]?.paymentId,
        merchantReference: 'late-1',
      }),
    });
    expect(response.status).toBe(200);
    const failed = await until(async () => {
      const lookup = await service.call('GET', `/payments/credentials/${response.json.requestId}`, {
        apiKey: late.apiKey,
      });
      return lookup.json.state === 'FAILED' && lookup.json;
    });
    expect(failed.webhook.attempts).toHaveLength(4);
    expect(failed.failureReason).toBeTruthy();

    const up = await startReceiver({ port });
    try {
      const resent = await service.call('POST', `/webhooks/messages/${failed.webhook.messageId}/resend`, {
        apiKey: late.apiKey,
      });
      expect(resent.status).toBe(200);
      const audited = await new AuditTrail(service.services.db).list({
        merchantId: late.merchantId,
        action: 'webhook.resent',
      });
      const [key] = await service.services.merchants.listApiKeys(late.merchantId);
      expect(audited).toMatchObject([
        {
          actor: `merchant:${late.merchantId}/${key?.id}`,
          subject: failed.webhook.messageId,
          details: { eventName: 'PAYMENT_CREDENTIALS' },
        },
      ]);
      const webhook = await up.next();
      expect(webhook.headers['webhook-id']).toBe(failed.webhook.messageId);
      await until(async () => {
        const lookup = await service.call('GET', `/payments/credentials/${response.json.requestId}`, {
          apiKey: late.apiKey,
        });
        return lookup.json.state === 'DELIVERED';
      });
    } finally {
      await up.close();
    }
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer and does nothing twice', async () => {
      const headers = { 'idempotency-key': `k-${engine}-1` };
      const first = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-1' }),
        headers,
      });
      const second = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-1' }),
        headers,
      });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.json).toEqual(first.json);
      expect(second.headers['idempotent-replayed']).toBe('true');
      const found = await service.call('GET', '/payments/credentials?merchantReference=idem-1', {
        apiKey: shop.apiKey,
      });
      expect(found.json.data).toHaveLength(1);
      const misspelt = await service.call('GET', '/payments/credentials?merchantReference=idem-1&limt=1', {
        apiKey: shop.apiKey,
      });
      expect(misspelt.status).toBe(400);
      expect(misspelt.json.errorMessage).toBe('query parameter limt is not one this route takes');
    });

    it('answers 409 when the key comes back with another body', async () => {
      const headers = { 'idempotency-key': `k-${engine}-2` };
      await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-2' }),
        headers,
      });
      const reused = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-2b' }),
        headers,
      });
      expect(reused.status).toBe(409);
      expect(reused.json).toEqual({
        errorCode: 'IDEMPOTENCY_KEY_REUSED',
        errorMessage:
          'This Idempotency-Key was used with a different request (another body, path or operation); use a new key for a new request.',
      });
    });

    it('keeps no 400, so the same key sends the request mended', async () => {
      const headers = { 'idempotency-key': `k-${engine}-mended` };
      const euros = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-mended', currency: 'EUR' }),
        headers,
      });
      expect([euros.status, euros.json.errorCode]).toEqual([400, 'UNSUPPORTED_CURRENCY']);
      const dollars = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body({ merchantReference: 'idem-mended' }),
        headers,
      });
      expect([dollars.status, dollars.headers['idempotent-replayed']]).toEqual([200, undefined]);
    });

    it('scopes keys per merchant', async () => {
      const other = await service.merchant({ webhookUrl: receiver.url });
      const theirs = await service.session(other.apiKey);
      const headers = { 'idempotency-key': `k-${engine}-shared` };
      const mine = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: body(),
        headers,
      });
      const yours = await service.call('POST', '/payments/credentials', {
        apiKey: other.apiKey,
        body: body({ sessionId: theirs.sessionId, paymentId: theirs.paymentMethods[0]?.paymentId }),
        headers,
      });
      expect(mine.status).toBe(200);
      expect(yours.status).toBe(200);
      expect(yours.json.requestId).not.toBe(mine.json.requestId);
    });

    it('makes exactly one side effect for 20 concurrent requests with one key, and replays it to 20 more', async () => {
      const headers = { 'idempotency-key': `k-${engine}-concurrent` };
      const twenty = () =>
        Promise.all(
          Array.from({ length: 20 }, () =>
            service.call('POST', '/payments/credentials', {
              apiKey: shop.apiKey,
              body: body({ merchantReference: 'idem-20' }),
              headers,
            }),
          ),
        );
      const responses = await twenty();
      const ok = responses.filter((response) => response.status === 200);
      const busy = responses.filter((response) => response.status === 409);
      expect(ok.length + busy.length).toBe(20);
      expect(new Set(ok.map((response) => response.json.requestId)).size).toBe(1);
      for (const response of busy) expect(response.json.errorCode).toBe('IDEMPOTENCY_REQUEST_IN_PROGRESS');
      const found = await service.call('GET', '/payments/credentials?merchantReference=idem-20', {
        apiKey: shop.apiKey,
      });
      expect(found.json.data).toHaveLength(1);

      for (const repeat of await twenty()) {
        expect([repeat.status, repeat.headers['idempotent-replayed']]).toEqual([200, 'true']);
        expect(repeat.json).toEqual(ok[0]?.json);
      }
    });
  });
});

describe.each(engines())('a credentials webhook after the approval was withdrawn, on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    // Attempts on the main thread, whose merchant cache the withdrawal clears at once (a delivery
    // thread's copy expires within 5 s).
    service = await startTestService(engine, { WEBHOOK_WORKER: 'off' });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('sends no card data when resent: the attempt fails and says why', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session, { merchantReference: 'withdrawn-1' }),
    });
    expect(response.status).toBe(200);
    await receiver.nth(1);
    const lookup = () =>
      service.call('GET', `/payments/credentials/${response.json.requestId}`, { apiKey: shop.apiKey });
    const delivered = await until(async () => {
      const found = await lookup();
      return found.json.state === 'DELIVERED' && found.json;
    });

    await service.services.merchants.approveCredentials(shop.merchantId, [], TEST_ACTOR);
    const resent = await service.call('POST', `/webhooks/messages/${delivered.webhook.messageId}/resend`, {
      apiKey: shop.apiKey,
    });
    expect(resent.status).toBe(200);
    const failed = await until(async () => {
      const message = await service.call('GET', `/webhooks/messages/${delivered.webhook.messageId}`, {
        apiKey: shop.apiKey,
      });
      return message.json.attempts.length >= 2 && message.json;
    });
    expect(failed.attempts[1]).toMatchObject({
      statusCode: null,
      error: expect.stringContaining('no longer approved for the credentials flow'),
    });
    expect(receiver.received).toHaveLength(1);
  });
});
