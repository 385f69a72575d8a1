/**
 * `guestRedirect(email)`: a known email resolves true once the checkout opens at the one-time-code step
 * for that email, or false after `error` when its order is refused (here by the SDK's own check of it);
 * an unknown one resolves false and opens nothing (no order either).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buttonOptions,
  CHECKOUT_FRAME,
  EMAIL,
  enterCode,
  type Harness,
  openTab,
  shipAndPay,
  startHarness,
  waitForOutcome,
} from './support.js';

describe('guestRedirect in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('a known email → true, the checkout opens at the code step for it, and the shopper can pay', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
      const redirected = await page.evaluate(`window.walletButton.guestRedirect(${JSON.stringify(EMAIL)})`);
      expect(redirected).toBe(true);
      // Resolved once the order existed and the checkout was loading: getOrderId had run by then.
      expect(await page.evaluate('window.calls.getOrderId.length')).toBe(1);
      expect(await page.getByRole('dialog').count()).toBe(1);
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      // The email step was skipped: the code went to the email given (shown masked); verifying it signs
      // that shopper in, as customerInfo.email shows below.
      await expect.poll(() => checkout.locator('form').first().textContent()).toContain('t***r@example.com');
      expect(await checkout.getByLabel('Email').count()).toBe(0);
      await tab.shot('guest-redirect-code');
      await enterCode(checkout);
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await shipAndPay(checkout);
      const calls = await waitForOutcome(page);
      expect(calls.error).toEqual([]);
      expect(calls.success[0]?.[0]).toBe(orderId);
      expect(calls.success[0]?.[1]).toMatchObject({ email: EMAIL });
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('a known email whose order is refused (a currency other than USD) → false, after error, with the checkout closed', async () => {
    if (!harness) throw new Error('setup did not finish');
    const url = harness.page('/euros', {
      options: buttonOptions({
        orderDetailsCallback: `(actions) => actions.createOrder({ orderId: 'shop-eur', lineItems: [], subtotal: 3700, currencyCode: 'EUR' })`,
      }),
    });
    const tab = await openTab(harness.browser);
    const { page } = tab;
    try {
      await page.goto(url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
      const redirected = await page.evaluate(`window.walletButton.guestRedirect(${JSON.stringify(EMAIL)})`);
      expect(redirected).toBe(false);
      // Reported before the promise resolved, so the page's own guest checkout can carry on.
      expect(await page.evaluate('window.calls')).toEqual({
        getOrderId: [],
        success: [],
        error: [['', '-1', 'currencyCode must be one of USD, got "EUR"']],
        onClose: [],
        onPaymentSelected: [],
      });
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Pay with Wallet' }).isEnabled()).toBe(true);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('an unknown email → false, no checkout, no order', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page } = tab;
    const orderPosts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/checkout/orders'))
        orderPosts.push(request.url());
    });
    try {
      await page.goto(harness.shop.url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
      const redirected = await page.evaluate(
        `window.walletButton.guestRedirect('nobody.${Date.now()}@example.com')`,
      );
      expect(redirected).toBe(false);
      expect(await page.locator(CHECKOUT_FRAME).count()).toBe(0);
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(orderPosts).toEqual([]);
      expect(await page.evaluate('window.calls')).toEqual({
        getOrderId: [],
        success: [],
        error: [],
        onClose: [],
        onPaymentSelected: [],
      });
      // The button is not left busy.
      expect(await page.getByRole('button', { name: 'Pay with Wallet' }).isEnabled()).toBe(true);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
