/**
 * `getOrderId(orderId)` runs as soon as the order exists, before the checkout is visible: at that moment
 * the modal's iframe has no checkout loaded and is hidden, and a callback still running after
 * `createOrder` has already seen it; the same id later reaches `success`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buttonOptions,
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForOutcome,
} from './support.js';

describe('getOrderId before the modal in real Chromium', () => {
  let harness: Harness | undefined;
  let url = '';
  let earlyUrl = '';
  beforeAll(async () => {
    harness = await startHarness();
    // getOrderId also notes what the checkout iframe looked like when it ran.
    url = harness.page('/order-id', {
      options: buttonOptions({
        getOrderId: `(...args) => {
          const frames = [...document.querySelectorAll('body > *')]
            .map((element) => element.shadowRoot?.querySelector('iframe'))
            .filter(Boolean);
          window.seenAtGetOrderId = frames.map((frame) => ({
            src: frame.getAttribute('src'),
            visibility: getComputedStyle(frame).visibility,
          }));
          window.calls.getOrderId.push(args);
        }`,
      }),
    });
    // The callback notes getOrderId's calls once createOrder has resolved, then waits to be let go.
    earlyUrl = harness.page('/order-id-early', {
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          await actions.createOrder({
            orderId: 'shop-1002',
            lineItems: [{ SKU: 'TEE', name: 'T-shirt', amount: 2500 }],
            subtotal: 2500,
          });
          window.getOrderIdAtCreateOrder = window.calls.getOrderId.slice();
          await new Promise((resolve) => {
            window.releaseCallback = resolve;
          });
        }`,
      }),
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('getOrderId gets the id while the iframe is empty and hidden; success gets the same id', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(url);
      const orderId = await pressWalletButton(page);
      expect(orderId).toMatch(/^ord_/);
      const seen = (await page.evaluate('window.seenAtGetOrderId')) as Array<{
        src: string | null;
        visibility: string;
      }>;
      expect(seen).toHaveLength(1);
      for (const frame of seen) {
        expect(frame.src ?? '').not.toContain('/checkout/');
        expect(frame.visibility).toBe('hidden');
      }
      await payWithCard(checkout);
      const calls = await waitForOutcome(page);
      expect(calls.error).toEqual([]);
      expect(calls.getOrderId).toEqual([[orderId]]);
      expect(calls.success).toHaveLength(1);
      expect(calls.success[0]?.[0]).toBe(orderId);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('getOrderId runs as soon as the order exists, while orderDetailsCallback still runs', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(earlyUrl);
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      await page.waitForFunction('typeof window.releaseCallback === "function"');
      const [[orderId]] = (await page.evaluate('window.getOrderIdAtCreateOrder')) as [[string]];
      expect(orderId).toMatch(/^ord_/);
      // The checkout is not loaded while the callback still runs.
      const sources = (await page.evaluate(`[...document.querySelectorAll('body > *')]
        .map((element) => element.shadowRoot?.querySelector('iframe')?.getAttribute('src'))
        .filter((src) => src !== undefined)`)) as (string | null)[];
      expect(sources).toHaveLength(1);
      expect(sources[0] ?? '').not.toContain('/checkout/');
      await page.evaluate('window.releaseCallback()');
      await payWithCard(checkout);
      const calls = await waitForOutcome(page);
      expect(calls.getOrderId).toEqual([[orderId]]);
      expect(calls.success[0]?.[0]).toBe(orderId);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
