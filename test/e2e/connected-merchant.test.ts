/** A `connected` merchant's payments carry the gateway's STP reference: transactionDetails.stpReferenceNum. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Harness,
  openTab,
  payWithCard,
  pressWalletButton,
  startHarness,
  waitForSuccess,
} from './support.js';

describe('a connected merchant in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness({ variant: 'connected' });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('success(...) gets transactionDetails with stpReferenceNum', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(harness.shop.url);
      const orderId = await pressWalletButton(tab.page);
      await payWithCard(tab.checkout);
      const args = await waitForSuccess(tab.page);
      expect(args[0]).toBe(orderId);
      const transactionDetails = args[6] as Record<string, unknown>;
      expect(transactionDetails).toMatchObject({
        gatewayTransactionId: expect.any(String),
        stpReferenceNum: expect.any(String),
      });
      expect(transactionDetails.stpReferenceNum).not.toBe('');
      const order = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(order.json.status).toBe('SUCCEEDED');
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
