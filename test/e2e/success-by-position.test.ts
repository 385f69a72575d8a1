/**
 * `success` is positional: a merchant who declares `(orderId, billingInfo, taxes)` gets customerInfo in
 * the second parameter and shippingInfo in the third, whatever the names say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buttonOptions,
  EMAIL,
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForOutcome,
} from './support.js';

describe('success receives values by position in real Chromium', () => {
  let harness: Harness | undefined;
  let url = '';
  beforeAll(async () => {
    harness = await startHarness();
    url = harness.page('/three-parameters', {
      options: buttonOptions({
        success: `function (orderId, billingInfo, taxes) {
          window.calls.success.push([orderId, billingInfo, taxes, arguments.length]);
        }`,
      }),
    });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('(orderId, billingInfo, taxes) receives orderId, customerInfo, shippingInfo', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(url);
      const orderId = await pressWalletButton(tab.page);
      await payWithCard(tab.checkout);
      const calls = await waitForOutcome(tab.page);
      expect(calls.error).toEqual([]);
      expect(calls.success).toHaveLength(1);
      const [first, second, third, count] = calls.success[0] as [unknown, unknown, unknown, number];
      expect(first).toBe(orderId);
      // customerInfo, although the merchant named it billingInfo.
      expect(second).toMatchObject({ email: EMAIL, paymentMethod: { last4CardNumber: '1111' } });
      // shippingInfo, although the merchant named it taxes.
      expect(typeof third).toBe('object');
      expect(third).toMatchObject({ address1: '100 Congress Ave', zip: '78701', state: 'TX' });
      expect(third).not.toHaveProperty('email');
      // The SDK still passes all seven.
      expect(count).toBe(7);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
