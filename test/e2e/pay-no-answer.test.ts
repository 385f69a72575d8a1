/**
 * A payment whose answer never comes (the service stalled, the connection lost), in real Chromium: the
 * checkout says the payment is in progress, explains rather than ignores Close and Escape, and gives up
 * after 30 s with the truth (the payment may have gone through; trying again is safe). Trying again sends
 * the same Idempotency-Key and charges once. The page's clock is Playwright's, moved on by the test, and
 * the pay request is held by a route of the browser: no sleeps.
 */
import type { Request, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayProxy } from '../../packages/server/src/test-support/gateway-proxy.js';
import {
  chooseCard,
  gatewayBehindProxy,
  type Harness,
  openTab,
  orderStatus,
  pressWalletButton,
  recordedCalls,
  ship,
  signIn,
  startHarness,
  type Tab,
  waitForSuccess,
} from './support.js';

const PAY = '**/checkout/api/orders/*/pay';
const UNANSWERED = /We got no answer about your payment\. It may have gone through: trying again is safe/;
/** 30 s: the checkout's time-out for a payment (packages/checkout-ui/src/api.ts). */
const PAY_TIMEOUT = '00:30';

describe('a payment that gets no answer, in real Chromium', () => {
  let harness: Harness | undefined;
  let proxy: GatewayProxy | undefined;
  beforeAll(async () => {
    harness = await startHarness();
    proxy = await gatewayBehindProxy(harness, 10_000, 'sk_sandbox_no_answer');
  });
  afterAll(async () => {
    await proxy?.close();
    await harness?.close();
  });

  const statusOf = (orderId: string) => orderStatus(harness as Harness, orderId);

  /**
   * Opens the checkout with the page's clock under the test's hand, up to the summary; the pay requests
   * the checkout sends are kept, and `onPay` decides what becomes of each.
   */
  const upToPay = async (tab: Tab, onPay: (route: Route) => Promise<void>) => {
    if (!harness) throw new Error('setup did not finish');
    const sent: Request[] = [];
    await tab.context.clock.install();
    await tab.context.route(PAY, (route) => {
      sent.push(route.request());
      return onPay(route);
    });
    await tab.page.goto(harness.shop.url);
    const orderId = await pressWalletButton(tab.page);
    await signIn(tab.checkout);
    await chooseCard(tab.checkout, '1111');
    await ship(tab.checkout);
    const pay = tab.checkout.getByRole('button', { name: /^Pay \$/ });
    await pay.waitFor();
    return { orderId, pay, sent };
  };

  it('says the payment is in progress, explains Close and Escape, then gives up and may close', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      // The service never answers: the request is held, as by a stalled process.
      const { orderId, pay } = await upToPay(tab, async () => {});
      await pay.click();
      const status = checkout.getByRole('status');
      await expect.poll(() => status.textContent()).toBe('Payment in progress…');
      await page.keyboard.press('Escape');
      await checkout.getByRole('button', { name: 'Close' }).click();
      await expect
        .poll(() => status.textContent())
        .toBe('Payment in progress… Wait for the answer before closing: it comes within 30 seconds.');
      expect((await recordedCalls(page)).onClose).toEqual([]);

      await page.clock.fastForward(PAY_TIMEOUT);
      await checkout.getByRole('alert').filter({ hasText: UNANSWERED }).waitFor();
      await tab.shot('pay-no-answer');
      expect(await status.textContent()).toBe('');
      await checkout.getByRole('button', { name: 'Close' }).click();
      await page.waitForFunction('window.calls.onClose.length === 1');
      const calls = await recordedCalls(page);
      expect([calls.success, calls.error]).toEqual([[], []]);
      await expect.poll(() => statusOf(orderId)).toBe('ABANDONED');
    } finally {
      await tab.close();
    }
  }, 90_000);

  it('a payment made whose answer was lost: trying again sends the same key, answers success, charges once', async () => {
    if (!harness || !proxy) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      let lose = true;
      const { orderId, pay, sent } = await upToPay(tab, async (route) => {
        if (!lose) return route.continue();
        // The service pays; its answer never reaches the page.
        await route.fetch();
      });
      await pay.click();
      await expect.poll(() => statusOf(orderId)).toBe('SUCCEEDED');
      await page.clock.fastForward(PAY_TIMEOUT);
      await checkout.getByRole('alert').filter({ hasText: UNANSWERED }).waitFor();
      expect((await recordedCalls(page)).success).toEqual([]);

      lose = false;
      await pay.click();
      expect((await waitForSuccess(page))[0]).toBe(orderId);
      const keys = await Promise.all(sent.map((request) => request.headerValue('idempotency-key')));
      expect(keys).toHaveLength(2);
      expect(keys[0]).toBeTruthy();
      expect(keys[1]).toBe(keys[0]);
      expect(proxy.forwarded.filter((entry) => entry.idempotencyKey === orderId)).toHaveLength(1);
    } finally {
      await tab.close();
    }
  }, 90_000);

  it('a connection lost during the payment: the same words, and trying again pays', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      let drop = true;
      const { orderId, pay } = await upToPay(tab, (route) => (drop ? route.abort() : route.continue()));
      await pay.click();
      await checkout.getByRole('alert').filter({ hasText: UNANSWERED }).waitFor();
      drop = false;
      await pay.click();
      expect((await waitForSuccess(page))[0]).toBe(orderId);
    } finally {
      await tab.close();
    }
  }, 90_000);
});
