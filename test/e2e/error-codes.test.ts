/**
 * The staging test shopper pays with each of the declining test cards: the sandbox gateway's answer
 * reaches the merchant page as `error(orderId, errorCode, errorMessage)` with the interface's codes and
 * messages, `success` is never called, and the order is not SUCCEEDED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKOUT_FRAME,
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForOutcome,
} from './support.js';

describe('the three error codes in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it.each([
    { last4: '0002', errorCode: '995', errorMessage: 'Unable to process card' },
    { last4: '0069', errorCode: '990', errorMessage: 'Card was declined' },
    { last4: '0119', errorCode: '-1', errorMessage: null },
  ])(
    'the card ending in $last4 → error(orderId, $errorCode, $errorMessage)',
    async ({ last4, errorCode, errorMessage }) => {
      if (!harness) throw new Error('setup did not finish');
      const tab = await openTab(harness.browser);
      try {
        await tab.page.goto(harness.shop.url);
        const orderId = await pressWalletButton(tab.page);
        await payWithCard(tab.checkout, last4);
        const calls = await waitForOutcome(tab.page);
        expect(calls.success).toEqual([]);
        expect(calls.onClose).toEqual([]);
        expect(calls.error).toEqual([[orderId, errorCode, errorMessage]]);
        await tab.page.locator(CHECKOUT_FRAME).waitFor({ state: 'detached' });
        await tab.shot(`error-${errorCode === '-1' ? 'unexpected' : errorCode}`);
        const order = await harness.service.call('GET', `/orders/${orderId}`, {
          apiKey: harness.merchant.apiKey,
        });
        expect(order.status).toBe(200);
        expect(order.json.status).not.toBe('SUCCEEDED');
        expect(await tab.page.evaluate('window.calls.success.length')).toBe(0);
      } finally {
        await tab.close();
      }
    },
    60_000,
  );
});
