import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../audit/index.js';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { engines } from '../../test-support/db.js';
import {
  credentialsBody,
  signInTestShopper,
  startTestService,
  type TestService,
} from '../../test-support/service.js';

const SHOP = 'https://shop.example';

describe.each(engines())('checkout page API: a signed-in shopper deletes the wallet on %s', (engine) => {
  let service: TestService;
  let merchant: { merchantId: string; apiKey: string };

  beforeAll(async () => {
    service = await startTestService(engine);
    merchant = await service.merchant({ allowedOrigins: [SHOP], webhookUrl: 'http://127.0.0.1:9/hooks' });
  });
  afterAll(() => service?.close());

  it('erases it as the shopper asked: signed out everywhere, sessions ended, the email free, the action audited', async () => {
    const session = await service.session(merchant.apiKey);
    const signedIn = await signInTestShopper(service, merchant.merchantId, SHOP);
    const other = await signInTestShopper(service, merchant.merchantId, SHOP);
    const shopperId = (await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL))?.id as string;

    const deleted = await service.call('DELETE', '/checkout/api/wallet', { headers: signedIn.headers });
    expect([deleted.status, deleted.json]).toEqual([200, { deleted: true }]);

    // This sign-in and the other checkout's are over; the merchant's session is ended.
    for (const { headers } of [signedIn, other]) {
      const wallet = await service.call('GET', '/checkout/api/wallet', { headers });
      expect([wallet.status, wallet.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    }
    const again = await service.call('DELETE', '/checkout/api/wallet', { headers: signedIn.headers });
    expect(again.status).toBe(401);
    const credentials = await service.call('POST', '/payments/credentials', {
      apiKey: merchant.apiKey,
      body: credentialsBody(session),
    });
    expect([credentials.status, credentials.json.errorCode]).toEqual([422, 'SESSION_EXPIRED']);
    // The email is unknown now: the checkout offers a new wallet.
    const asked = await service.call('POST', `/checkout/api/orders/${signedIn.orderId}/otp`, {
      body: { email: TEST_SHOPPER_EMAIL },
    });
    expect(asked.json.status).toBe('enrol');

    const events = await new AuditTrail(service.services.db).list({ action: 'shopper.erased' });
    expect(events).toMatchObject([{ actor: `shopper:${shopperId}`, subject: shopperId, merchantId: null }]);
  });

  it('answers 401 without a sign-in, and deletes nothing', async () => {
    const response = await service.call('DELETE', '/checkout/api/wallet');
    expect([response.status, response.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
  });
});
