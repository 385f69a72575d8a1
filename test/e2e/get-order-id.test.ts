/**
 * `getOrderId(orderId)` runs before the checkout is visible: at that moment the modal's iframe has no
 * checkout loaded and is hidden; the same id later reaches `success`.
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
});
