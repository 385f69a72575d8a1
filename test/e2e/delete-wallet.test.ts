/**
 * End to end in real Chromium: the staging test shopper deletes its wallet from the checkout, after a
 * confirmation it can decline, and is back on the Email step, signed out, told so. Screenshots to
 * docs/screenshots/delete-wallet-01-question.png and delete-wallet-02-deleted.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../packages/server/src/audit/index.js';
import { TEST_SHOPPER_EMAIL } from '../../packages/server/src/sandbox/seed.js';
import { type Harness, openTab, pressWalletButton, signIn, startHarness, testShopper } from './support.js';

describe('a shopper deletes the wallet from the checkout in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('asks first, then erases the wallet and signs the shopper out', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      await checkout.getByRole('radio', { name: /ending in 1111/ }).waitFor({ state: 'attached' });

      // Declined: the wallet stays, and focus goes back to the link.
      const offer = checkout.getByRole('button', { name: 'Delete my wallet' });
      await offer.click();
      await checkout.getByRole('button', { name: 'Keep it' }).click();
      await expect.poll(() => checkout.locator(':focus').textContent()).toBe('Delete my wallet');
      expect(await checkout.getByText(/^Delete your wallet\?/).count()).toBe(0);

      await offer.click();
      await checkout
        .getByText(/^Delete your wallet\? Its cards and addresses are removed for good/)
        .waitFor();
      await expect.poll(() => checkout.locator(':focus').textContent()).toContain('Delete wallet');
      // While it is asked, the card's own removal links give way.
      expect(await checkout.getByRole('button', { name: 'Remove this card' }).count()).toBe(0);
      await tab.shot('delete-wallet-01-question');
      await checkout.getByRole('button', { name: 'Delete wallet' }).click();

      await checkout.getByRole('heading', { name: 'Check out with your wallet' }).waitFor();
      await checkout.getByRole('status').filter({ hasText: 'Your wallet was deleted.' }).waitFor();
      expect(await checkout.getByLabel('Email').inputValue()).toBe(TEST_SHOPPER_EMAIL);
      await tab.shot('delete-wallet-02-deleted');

      // The wallet is erased, by the shopper's own hand; the same email now starts a new wallet.
      expect(await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL)).toBeUndefined();
      const [event] = await new AuditTrail(service.services.db).list({ action: 'shopper.erased' });
      expect(event).toMatchObject({ actor: `shopper:${shopper.id}`, subject: shopper.id });
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout
        .getByRole('heading', { name: /wallet/i })
        .and(checkout.locator('h1, h2'))
        .first()
        .waitFor();
      await checkout.getByLabel('Card number').waitFor();
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
