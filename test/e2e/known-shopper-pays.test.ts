/**
 * End to end in real Chromium: a merchant page on its own origin loads the SDK from the service, the
 * shopper presses "Pay with Wallet", signs in with the staging test shopper's one-time code, picks the
 * Visa ending in 1111 and pays through the sandbox gateway. Screenshots of every step go to
 * docs/screenshots/ for the integration guide. "Change" on the review opens one step and comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseCard,
  EMAIL,
  GROUND,
  type Harness,
  openTab,
  pressWalletButton,
  ship,
  shipAndPay,
  signIn,
  startHarness,
  waitForSuccess,
} from './support.js';

describe('a known shopper pays in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('from the button to success(...) with the seven arguments, and the order SUCCEEDED', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop, merchant } = harness;
    const tab = await openTab(harness.browser, { width: 1024, height: 800 });
    const { page, consoleErrors, checkout } = tab;
    const shot = (name: string) => tab.shot(`known-shopper-${name}`);

    try {
      await page.goto(shop.url);
      const button = page.getByRole('button', { name: 'Pay with Wallet' });
      await button.waitFor();
      await shot('01-merchant-page');

      const created = page.waitForResponse(
        (response) => response.url().endsWith('/checkout/orders') && response.request().method() === 'POST',
      );
      await button.click();
      expect((await created).status()).toBe(201);
      // getOrderId runs before the checkout is loaded into the modal.
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      expect(orderId).toMatch(/^ord_/);

      const email = checkout.getByLabel('Email');
      await email.waitFor();
      await email.fill(EMAIL);
      await shot('02-email');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      await code.fill('123456');
      await shot('03-one-time-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      const visa = checkout.getByRole('radio', { name: /^Visa ending in 1111\b/ });
      await visa.waitFor({ state: 'attached' });
      await visa.check();
      await expect.poll(() => visa.isChecked()).toBe(true);
      await shot('04-card');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const steps = { 'shipping-address': '05', 'shipping-method': '06', summary: '07' } as const;
      await shipAndPay(checkout, (step) => shot(`${steps[step]}-${step}`));

      const args = await waitForSuccess(page);
      const [
        paidOrderId,
        customerInfo,
        shippingInfo,
        billingInfo,
        shippingMethod,
        taxes,
        transactionDetails,
      ] = args as [
        string,
        Record<string, unknown>,
        unknown,
        unknown,
        unknown,
        unknown,
        Record<string, unknown>,
      ];
      expect(paidOrderId).toBe(orderId);
      expect(customerInfo).toMatchObject({
        email: EMAIL,
        paymentMethod: {
          last4CardNumber: '1111',
          cardBrand: expect.any(String),
          addressId: expect.any(Number),
          expMonth: expect.any(Number),
          expYear: expect.any(Number),
          paymentToken: expect.stringMatching(/^ptk_/),
          address: expect.objectContaining({ zip: expect.any(String) }),
        },
      });
      const method = customerInfo.paymentMethod as { addressId: number; expMonth: number; expYear: number };
      expect(Number.isInteger(method.addressId)).toBe(true);
      expect(Number.isInteger(method.expMonth)).toBe(true);
      expect(Number.isInteger(method.expYear)).toBe(true);
      expect(shippingInfo).toMatchObject({ address1: expect.any(String), zip: expect.any(String) });
      expect(billingInfo).toMatchObject({ address1: expect.any(String), zip: expect.any(String) });
      expect(shippingMethod).toEqual(GROUND);
      expect(Number.isInteger(taxes)).toBe(true);
      expect(transactionDetails).toMatchObject({ gatewayTransactionId: expect.any(String) });
      expect(transactionDetails.gatewayTransactionId).not.toBe('');

      // The modal is gone.
      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await shot('08-paid');

      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: merchant.apiKey });
      expect(order.status).toBe(200);
      expect(order.json).toMatchObject({ orderId, status: 'SUCCEEDED', merchantOrderId: 'shop-1001' });
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 90_000);
  it('Change on the review opens one step, whose Continue or Back leads straight back to the review', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: 1024, height: 800 });
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      await chooseCard(checkout, '1111');
      await ship(checkout);
      const review = checkout.getByRole('heading', { name: 'Review and pay' });
      await review.waitFor();
      const changes = [
        { change: 'Change card', step: 'Choose a card', leave: 'Continue' },
        { change: 'Change address', step: 'Shipping address', leave: 'Continue' },
        { change: 'Change shipping method', step: 'Shipping method', leave: 'Continue' },
        { change: 'Change card', step: 'Choose a card', leave: '← Back' },
        { change: 'Change address', step: 'Shipping address', leave: '← Back' },
        { change: 'Change shipping method', step: 'Shipping method', leave: '← Back' },
      ];
      for (const { change, step, leave } of changes) {
        await checkout.getByRole('button', { name: change }).click();
        await checkout.getByRole('heading', { name: step }).waitFor();
        await checkout.getByRole('button', { name: leave, exact: true }).click();
        await review.waitFor();
      }
      await checkout.getByRole('button', { name: /^Pay \$/ }).click();
      await waitForSuccess(page);
    } finally {
      await tab.close();
    }
  }, 90_000);
});
