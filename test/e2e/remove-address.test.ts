/**
 * End to end in real Chromium: the staging test shopper removes a shipping address it no longer uses,
 * after a confirmation, and is told why the billing address of its cards cannot go; then it pays,
 * shipping to the address left. Screenshot to docs/screenshots/remove-address-01-question.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chooseCard,
  type Harness,
  openTab,
  pressWalletButton,
  shipAndPay,
  signIn,
  startHarness,
  testShopper,
  waitForSuccess,
} from './support.js';

describe('a shopper removes an address from the wallet in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('removes an unused address after a confirmation, and keeps the billing address of its cards', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const { wallet } = service.services;
    const shopper = await testShopper(service);
    const [home] = await wallet.listAddresses(shopper.id);
    if (home?.address1 !== '100 Congress Ave') throw new Error('the staging seed changed its address');
    const moved = await wallet.addAddress(shopper.id, {
      firstName: 'Taylor',
      lastName: 'Shopper',
      address1: '9 Moved St',
      city: 'Denver',
      state: 'CO',
      zip: '80202',
      country: 'US',
    });

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      await chooseCard(checkout, '1111');
      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      const movedTile = checkout.getByRole('radio', { name: /9 Moved St/ });
      await checkout.locator('label', { has: movedTile }).click();
      await expect.poll(() => movedTile.isChecked()).toBe(true);

      const question = 'Remove 9 Moved St, Denver, CO 80202 from your wallet?';
      await checkout.getByRole('button', { name: 'Remove this address' }).click();
      await checkout.getByText(question).waitFor();
      await expect.poll(() => checkout.locator(':focus').textContent()).toContain('Remove address');
      await tab.shot('remove-address-01-question');
      await checkout.getByRole('button', { name: 'Remove address' }).click();

      await checkout.getByText('9 Moved St, Denver, CO 80202 was removed from your wallet.').waitFor({
        state: 'attached',
      });
      expect(await movedTile.count()).toBe(0);
      // Focus is on the address now selected: the default one.
      const homeTile = checkout.getByRole('radio', { name: /100 Congress Ave/ });
      await expect.poll(() => homeTile.isChecked()).toBe(true);
      await expect.poll(() => checkout.locator(':focus').getAttribute('value')).toBe(String(home.id));
      expect((await wallet.findAddress(moved.id))?.removedAt).toEqual(expect.any(Number));

      // The cards' billing address stays, and the shopper is told why.
      await checkout.getByRole('button', { name: 'Remove this address' }).click();
      await checkout.getByRole('button', { name: 'Remove address' }).click();
      await checkout
        .getByRole('alert')
        .getByText(/is the billing address of the Visa card ending in \d{4}/)
        .waitFor();
      expect(await homeTile.count()).toBe(1);

      await shipAndPay(checkout);
      const [paidOrderId] = (await waitForSuccess(page)) as [string];
      expect(paidOrderId).toBe(orderId);
      // The one error logged is the refused request's.
      expect(consoleErrors.filter((error) => !error.includes(`/wallet/addresses/${home.id}`))).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
