/**
 * End to end in real Chromium: a shopper with no wallet (a fresh email per run) presses "Pay with Wallet",
 * fills the enrolment form (name, phone, card, expiry, CVV, billing address), reads the one-time code from
 * the staging mailbox (`GET /sandbox/messages`), and pays with the new card through the sandbox gateway:
 * the CVV typed at enrolment goes with the payment. Screenshots to docs/screenshots/new-shopper-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUND, type Harness, openTab, shipAndPay, startHarness, waitForSuccess } from './support.js';

describe('a new shopper enrols and pays in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('from the button through enrolment and the emailed code to success(...) with the new card', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop, merchant } = harness;
    const serviceUrl = service.url;
    const email = `new.shopper+${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    const requests: Array<{ url: string; body: unknown }> = [];
    page.on('request', (request) => {
      if (request.url().includes('/checkout/api/') && request.method() === 'POST') {
        const data = request.postData();
        requests.push({ url: request.url(), body: data ? JSON.parse(data) : null });
      }
    });
    const shot = (name: string) => tab.shot(`new-shopper-${name}`);

    try {
      await page.goto(shop.url);
      const button = page.getByRole('button', { name: 'Pay with Wallet' });
      await button.waitFor();
      await button.click();
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      expect(orderId).toMatch(/^ord_/);

      const emailField = checkout.getByLabel('Email');
      await emailField.waitFor();
      await emailField.fill(email);
      await shot('01-email');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      // The server answers { status: 'enrol' }: the enrolment form.
      await checkout.getByRole('heading', { name: 'Create your wallet' }).waitFor();
      await checkout.getByLabel('First name').fill('Nova');
      await checkout.getByLabel('Last name').fill('Shopper');
      await checkout.getByLabel('Card number').fill('4242424242424242');
      await checkout.getByLabel('Expiry (MM/YY)').fill('12/30');
      await checkout.getByLabel('Security code (CVV)').fill('123');
      await checkout.getByLabel('Street address').fill('500 Congress Ave');
      await checkout.getByLabel('City').fill('Austin');
      await checkout.getByLabel('State').fill('TX');
      await checkout.getByLabel('ZIP code').fill('78701');
      await checkout.getByLabel('Phone').fill('+1 512 555 0100');
      await shot('02-enrol');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      const enrolCall = requests.find((r) => r.url.endsWith(`/orders/${orderId}/enrol`));
      expect(enrolCall?.body).toEqual({
        email,
        firstName: 'Nova',
        lastName: 'Shopper',
        phone: '+15125550100',
        card: { number: '4242424242424242', expMonth: 12, expYear: 2030, cvv: '123' },
        billingAddress: {
          company: null,
          address1: '500 Congress Ave',
          address2: null,
          city: 'Austin',
          state: 'TX',
          zip: '78701',
          country: 'US',
        },
      });

      // Staging keeps the message it would have e-mailed: the code is in its text.
      const inbox = await fetch(`${serviceUrl}/sandbox/messages?to=${encodeURIComponent(email)}`);
      expect(inbox.status).toBe(200);
      const { data } = (await inbox.json()) as { data: Array<{ to: string; text: string }> };
      const oneTimeCode = /\b(\d{6})\b/.exec(data[0]?.text ?? '')?.[1];
      expect(oneTimeCode).toMatch(/^\d{6}$/);
      await code.fill(oneTimeCode as string);
      await shot('03-one-time-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      // verify created the wallet; its one card is chosen, on to where it ships.
      const steps = { 'shipping-address': '04', 'shipping-method': '05', summary: '06' } as const;
      await shipAndPay(checkout, (step) => shot(`${steps[step]}-${step}`));

      const args = await waitForSuccess(page);
      const [paidOrderId, customerInfo, shippingInfo, billingInfo, shippingMethod, taxes] = args as [
        string,
        Record<string, unknown>,
        unknown,
        unknown,
        unknown,
        unknown,
      ];
      expect(paidOrderId).toBe(orderId);
      expect(customerInfo).toMatchObject({
        email,
        paymentMethod: {
          last4CardNumber: '4242',
          cardBrand: expect.stringMatching(/visa/i),
          expMonth: 12,
          expYear: 2030,
          paymentToken: expect.stringMatching(/^ptk_/),
          address: expect.objectContaining({ address1: '500 Congress Ave', zip: '78701' }),
        },
      });
      expect(shippingInfo).toMatchObject({ address1: '500 Congress Ave', state: 'TX' });
      expect(billingInfo).toMatchObject({ address1: '500 Congress Ave', zip: '78701' });
      expect(shippingMethod).toEqual(GROUND);
      // 8.25 % of $37.00 in Texas.
      expect(taxes).toBe(305);

      // The CVV typed at enrolment went with the payment, and only there after the enrolment.
      const payCall = requests.find((r) => r.url.endsWith(`/orders/${orderId}/pay`));
      expect(payCall?.body).toMatchObject({ cvv: '123' });

      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await shot('07-paid');

      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: merchant.apiKey });
      expect(order.json).toMatchObject({ orderId, status: 'SUCCEEDED' });
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 90_000);
});
