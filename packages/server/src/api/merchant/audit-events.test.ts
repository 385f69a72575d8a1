import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail, merchantActor, SERVICE_ACTOR, shopperActor } from '../../audit/index.js';
import { TEST_ACTOR } from '../../test-support/actor.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';

describe.each(engines())('GET /audit-events on %s', (engine) => {
  let service: TestService;
  let shop: { merchantId: string; apiKey: string };
  let keyId: string;
  const history = async (query = '', apiKey = shop.apiKey) =>
    service.call('GET', `/audit-events${query}`, { apiKey });

  beforeAll(async () => {
    service = await startTestService(engine);
    shop = await service.merchant({ name: 'Audited Shop' });
    const { merchants } = service.services;
    await merchants.update(shop.merchantId, { webhookUrl: 'https://audited.example/hooks' }, SERVICE_ACTOR);
    keyId = (await merchants.createApiKey(shop.merchantId, TEST_ACTOR)).id;
    await merchants.revokeApiKey(keyId, TEST_ACTOR);
    const trail = new AuditTrail(service.services.db);
    await trail.record({
      actor: merchantActor(shop.merchantId, 'key_0VdGLz5mHJBq1bd6c9Bf6F'),
      action: 'webhook.resent',
      merchantId: shop.merchantId,
      subject: 'msg_1',
      details: { eventName: 'PAYMENT_CREDENTIALS' },
    });
    // Another merchant's history, and events of no merchant, stay out of this one's.
    await service.merchant({ name: 'Other Shop' });
    await trail.record({ actor: TEST_ACTOR, action: 'shopper.viewed', subject: 'shp_1' });
  });
  afterAll(() => service?.close());

  it("lists what was done to the merchant's account, newest first, naming the kind of actor only", async () => {
    const response = await history();
    expect(response.status).toBe(200);
    expect(response.json.hasMore).toBe(false);
    expect(
      response.json.data.map(({ actor, apiKeyId, action, subject }: Record<string, unknown>) => [
        actor,
        apiKeyId,
        action,
        subject,
      ]),
    ).toEqual([
      ['merchant', 'key_0VdGLz5mHJBq1bd6c9Bf6F', 'webhook.resent', 'msg_1'],
      ['operator', null, 'api_key.revoked', keyId],
      ['operator', null, 'api_key.created', keyId],
      ['service', null, 'merchant.updated', null],
      ['operator', null, 'merchant.created', null],
    ]);
    expect(response.json.data[3]).toEqual({
      seq: expect.any(Number),
      at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      actor: 'service',
      apiKeyId: null,
      action: 'merchant.updated',
      subject: null,
      details: {
        changed: ['webhookUrl'],
        webhookUrl: 'https://audited.example/hooks',
        previous: { webhookUrl: null },
      },
    });
    // The operator's name stays in the service's own trail.
    expect(response.text).not.toContain(TEST_ACTOR.slice('operator:'.length));
  });

  it('pages back in time with startingAfter', async () => {
    const first = await history('?limit=2');
    expect(first.json.data.map((event: { action: string }) => event.action)).toEqual([
      'webhook.resent',
      'api_key.revoked',
    ]);
    expect(first.json.hasMore).toBe(true);
    const next = await history(`?limit=2&startingAfter=${first.json.data[1].seq}`);
    expect(next.json.data.map((event: { action: string }) => event.action)).toEqual([
      'api_key.created',
      'merchant.updated',
    ]);
    const last = await history(`?limit=2&startingAfter=${next.json.data[1].seq}`);
    expect(last.json).toMatchObject({ data: [{ action: 'merchant.created' }], hasMore: false });
  });

  it('refuses a bad page or an unknown parameter naming it, and a missing key', async () => {
    for (const [query, message] of [
      ['?limit=0', /limit/],
      ['?limit=101', /limit/],
      ['?startingAfter=abc', /startingAfter/],
      ['?offset=20', /offset/],
    ] as const) {
      const response = await history(query);
      expect([response.status, response.json.errorCode]).toEqual([400, 'VALIDATION_ERROR']);
      expect(response.json.errorMessage).toMatch(message);
    }
    const anonymous = await service.call('GET', '/audit-events');
    expect(anonymous.status).toBe(401);
  });

  it('answers for every kind of actor the trail knows, a shopper included', async () => {
    await new AuditTrail(service.services.db).record({
      actor: shopperActor('shp_1'),
      action: 'shopper.viewed',
      merchantId: shop.merchantId,
      subject: 'shp_1',
    });
    const response = await history('?limit=1');
    expect(response.status).toBe(200);
    expect(response.json.data).toMatchObject([
      { actor: 'shopper', apiKeyId: null, action: 'shopper.viewed' },
    ]);
  });
});
