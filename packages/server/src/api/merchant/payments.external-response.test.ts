import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { type Receiver, startReceiver } from '../../test-support/receiver.js';
import { startTestService, type TestService } from '../../test-support/service.js';

describe.each(engines())('POST /payments/externalresponse on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string };
  let paymentId: string;

  const report = (overrides: Record<string, unknown> = {}) => ({
    paymentId,
    pspRawResponse: '{"id":"ch_1","status":"succeeded","network_transaction_id":"123"}',
    amount: 2599,
    pspHostName: 'acme-psp',
    currency: 'USD',
    isRecurring: false,
    ...overrides,
  });

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    paymentId = session.paymentMethods[0]?.paymentId as string;
    const ack = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: {
        paymentId,
        sessionId: session.sessionId,
        amount: 2599,
        merchantReference: 'ext-1',
        currency: 'USD',
      },
    });
    expect(ack.status).toBe(200);
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('records the report against the latest credentials request, raw response encrypted', async () => {
    const response = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ isRecurring: true, amount: 2000 }),
    });
    expect(response.status).toBe(200);
    const found = await service.call('GET', '/payments/credentials?merchantReference=ext-1', {
      apiKey: shop.apiKey,
    });
    expect(response.json).toEqual({
      code: 200,
      message: 'OK',
      externalResponseId: expect.stringMatching(/^ext_/),
      requestId: found.json.data[0].requestId,
    });
    expect(found.json.data[0].externalResponses).toEqual([
      {
        id: response.json.externalResponseId,
        pspHostName: 'acme-psp',
        amount: 2000,
        currency: 'USD',
        isRecurring: true,
        createdAt: expect.any(String),
      },
    ]);
    const row = await service.services.db.kysely
      .selectFrom('external_responses')
      .selectAll()
      .executeTakeFirstOrThrow();
    expect(row.psp_raw_response_ciphertext).not.toContain('succeeded');
    expect(
      service.services.keyRing.open(
        row.psp_raw_response_ciphertext,
        'external_responses.psp_raw_response_ciphertext',
        row.id,
      ),
    ).toBe(report().pspRawResponse);
  });

  it('is served at the singular path too', async () => {
    const response = await service.call('POST', '/payment/externalresponse', {
      apiKey: shop.apiKey,
      body: report(),
    });
    expect(response.status).toBe(200);
  });

  it('refuses an amount above the requested amount', async () => {
    const response = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ amount: 2600 }),
    });
    expect(response.status).toBe(422);
    expect(response.json.errorCode).toBe('AMOUNT_EXCEEDS_REQUESTED');
    expect(response.json.errorMessage).toContain('2600');
  });

  it('needs an earlier credentials request of the same merchant for that paymentId', async () => {
    const unknown = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ paymentId: '00000000-0000-4000-8000-000000000000' }),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json.errorCode).toBe('CREDENTIALS_REQUEST_NOT_FOUND');

    const other = await service.merchant({ webhookUrl: receiver.url });
    const theirs = await service.call('POST', '/payments/externalresponse', {
      apiKey: other.apiKey,
      body: report(),
    });
    expect(theirs.status).toBe(404);
    expect(theirs.json.errorCode).toBe('CREDENTIALS_REQUEST_NOT_FOUND');
  });

  it.each(['paymentId', 'pspRawResponse', 'amount', 'pspHostName', 'currency', 'isRecurring'])(
    'answers 400 naming a missing %s',
    async (field) => {
      const incomplete: Record<string, unknown> = report();
      delete incomplete[field];
      const response = await service.call('POST', '/payments/externalresponse', {
        apiKey: shop.apiKey,
        body: incomplete,
      });
      expect(response.status).toBe(400);
      expect(response.json).toEqual({ errorCode: 'VALIDATION_ERROR', errorMessage: `${field} is required` });
    },
  );

  it.each([
    ['isRecurring', 'true', 'isRecurring must be a boolean'],
    ['isRecurring', 1, 'isRecurring must be a boolean'],
    ['amount', -5, 'amount must be at least 1'],
    ['pspRawResponse', { id: 1 }, 'pspRawResponse must be a string'],
    ['pspHostName', '', 'pspHostName must not be empty'],
  ])('answers 400 for %s = %j', async (field, value, message) => {
    const response = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ [field]: value }),
    });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errorCode: 'VALIDATION_ERROR', errorMessage: message });
  });

  it('replays with the same Idempotency-Key and records once', async () => {
    const headers = { 'idempotency-key': `ext-${engine}` };
    const first = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ amount: 1 }),
      headers,
    });
    const second = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: report({ amount: 1 }),
      headers,
    });
    expect(first.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    const rows = await service.services.db.kysely
      .selectFrom('external_responses')
      .select('id')
      .where('amount', '=', 1)
      .execute();
    expect(rows).toHaveLength(1);
  });
});
