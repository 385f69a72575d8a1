import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { engines } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { SIGN_IN_LIMITS } from './shoppers.rate-limit.js';

const SHOP = 'https://shop.example';

describe.each(engines())('rate limits of code requests and enrolments on %s', (engine) => {
  let service: TestService;
  let orderId: string;
  // Every 127.x.y.z address is this machine's loopback: one agent per address is one client per address.
  const [probing, other] = ['127.0.0.2', '127.0.0.3'].map((localAddress) => new Agent({ localAddress }));

  const post = async (client: Agent | undefined, path: string, body: unknown) => {
    const response = await request(`${service.url}/checkout/api/orders/${orderId}/${path}`, {
      method: 'POST',
      dispatcher: client,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: response.statusCode,
      retryAfter: response.headers['retry-after'],
      json: (await response.body.json()) as Record<string, unknown>,
    };
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    const { merchantId } = await service.merchant({ allowedOrigins: [SHOP] });
    const created = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: SHOP },
    });
    orderId = created.json.orderId as string;
  });
  afterAll(async () => {
    await Promise.all([probing?.close(), other?.close()]);
    await service?.close();
  });

  it('answers a client testing emails 429 once it has used its window, code requests and enrolments alike', async () => {
    for (let index = 0; index < SIGN_IN_LIMITS.perClient; index++) {
      const answer = await post(probing, 'otp', { email: `probe.${index}@example.com` });
      expect([index, answer.status, answer.json]).toEqual([index, 200, { status: 'enrol' }]);
    }
    const refused = await post(probing, 'otp', { email: 'probe.more@example.com' });
    expect([refused.status, refused.json.errorCode]).toEqual([429, 'RATE_LIMITED']);
    expect(refused.json.errorMessage).toMatch(/^Too many code requests and enrolments from this address/);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    // The enrolment's answer tells the same, so it counts the same, before its card is looked at: a
    // number that fails the Luhn check no longer probes for free.
    const enrol = await post(probing, 'enrol', {
      email: TEST_SHOPPER_EMAIL.replace('test.shopper', 'probe.enrol'),
      firstName: 'Pat',
      lastName: 'Probe',
      phone: '+15125550100',
      card: { number: '4111111111111112', expMonth: 12, expYear: 2039 },
      billingAddress: { address1: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', country: 'US' },
    });
    expect([enrol.status, enrol.json.errorCode]).toEqual([429, 'RATE_LIMITED']);

    // Another client is counted apart, and staging's test shopper, signed in all day by tests, never.
    expect((await post(other, 'otp', { email: 'probe.other@example.com' })).json).toEqual({
      status: 'enrol',
    });
    expect((await post(probing, 'otp', { email: TEST_SHOPPER_EMAIL })).json).toMatchObject({
      status: 'sent',
    });
  });
});
