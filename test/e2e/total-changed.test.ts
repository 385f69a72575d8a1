/**
 * The merchant raises a shipping price while a shopper looks at the summary: the payment of the total
 * shown is refused, the checkout shows the new total, and the shopper pays that.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ACTOR } from '../../packages/server/src/test-support/actor.js';
import {
  chooseCard,
  GROUND,
  type Harness,
  openTab,
  pressWalletButton,
  ship,
  signIn,
  startHarness,
  waitForSuccess,
} from './support.js';

describe('a price changed during the checkout, in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('is never charged unseen: the checkout shows the new total and the shopper pays it', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(harness.shop.url);
      const orderId = await pressWalletButton(tab.page);
      await signIn(tab.checkout);
      await chooseCard(tab.checkout, '1111');
      await ship(tab.checkout);
      const shown = tab.checkout.getByRole('button', { name: /^Pay \$/ });
      await shown.waitFor();
      const before = await shown.textContent();

      await harness.service.services.merchants.update(
        harness.merchant.merchantId,
        { shippingMethods: [{ ...GROUND, price: GROUND.price + 1_000 }] },
        TEST_ACTOR,
      );
      await shown.click();
      const alert = tab.checkout.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/^The total is now \$\d+\.\d\d: the shop changed a price/);
      const again = tab.checkout.getByRole('button', { name: /^Pay \$/ });
      expect(await again.textContent()).not.toBe(before);
      const unpaid = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(unpaid.json.status).toBe('CREATED');

      await again.click();
      await waitForSuccess(tab.page);
      const paid = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(paid.json).toMatchObject({ status: 'SUCCEEDED', shipping: { amount: GROUND.price + 1_000 } });
    } finally {
      await tab.close();
    }
  }, 60_000);
});
