import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { signInTestShopper, startTestService, type TestService } from '../../test-support/service.js';

const SHOP = 'https://shop.example';

describe.each(engines())('checkout page API: a shopper signs out ("Not you?") on %s', (engine) => {
  let service: TestService;
  let merchantId: string;

  beforeAll(async () => {
    service = await startTestService(engine);
    ({ merchantId } = await service.merchant({ allowedOrigins: [SHOP] }));
  });
  afterAll(() => service?.close());

  const walletStatus = async (headers: Record<string, string>) =>
    (await service.call('GET', '/checkout/api/wallet', { headers })).status;

  it('ends that sign-in at once, leaves the other checkouts signed in, and answers the same when repeated', async () => {
    const signedIn = await signInTestShopper(service, merchantId, SHOP);
    const other = await signInTestShopper(service, merchantId, SHOP);
    expect(await walletStatus(signedIn.headers)).toBe(200);

    const out = await service.call('POST', '/checkout/api/sign-out', { headers: signedIn.headers });
    expect([out.status, out.json]).toEqual([200, { signedOut: true }]);
    const refused = await service.call('GET', '/checkout/api/wallet', { headers: signedIn.headers });
    expect([refused.status, refused.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    expect(await walletStatus(other.headers)).toBe(200);

    const again = await service.call('POST', '/checkout/api/sign-out', { headers: signedIn.headers });
    expect([again.status, again.json]).toEqual([200, { signedOut: true }]);
    const unknown = await service.call('POST', '/checkout/api/sign-out', {
      headers: { authorization: 'Bearer no-such-token' },
    });
    expect(unknown.status).toBe(200);
    expect(await walletStatus(other.headers)).toBe(200);
  });

  it('answers 401 SHOPPER_UNAUTHORIZED without a shopper token', async () => {
    const response = await service.call('POST', '/checkout/api/sign-out');
    expect([response.status, response.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    expect(response.json.errorMessage).toContain('Authorization: Bearer <shopperToken>');
  });
});
