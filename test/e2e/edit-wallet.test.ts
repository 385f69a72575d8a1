/**
 * End to end in real Chromium: the staging test shopper gives its card a nickname and makes it the
 * default, then corrects its shipping address, and pays; the order ships to the corrected address,
 * saved in the old one's place. Then it gives the card a billing address typed in as a new one, and
 * pays with it. Screenshots to docs/screenshots/edit-wallet-01-card.png, edit-wallet-02-address.png
 * and edit-wallet-03-new-billing.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visaNumber } from '../../packages/server/src/test-support/cards.js';
import {
  type Harness,
  openTab,
  pressWalletButton,
  signIn,
  startHarness,
  testShopper,
  typeNewBillingAddress,
  waitForSuccess,
} from './support.js';

describe('a shopper edits a saved card and address in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('renames a card and makes it the default, corrects an address, and pays to the corrected one', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const { wallet, orders } = service.services;
    const shopper = await testShopper(service);
    const [home] = await wallet.listAddresses(shopper.id);
    if (home?.address1 !== '100 Congress Ave') throw new Error('the staging seed changed its address');
    const spare = await wallet.addCard({
      shopperId: shopper.id,
      pan: visaNumber(77),
      expMonth: 12,
      expYear: new Date().getUTCFullYear() + 2,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: home.id,
    });

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      const tile = checkout.getByRole('radio', { name: new RegExp(`ending in ${spare.last4}\\b`) });
      await tile.waitFor({ state: 'attached' });
      await checkout.locator('label', { has: tile }).click();
      await expect.poll(() => tile.isChecked()).toBe(true);

      // The form takes the place of the carousel, its first field focused.
      await checkout.getByRole('button', { name: 'Edit this card' }).click();
      await checkout.getByRole('group', { name: `Edit Visa ending in ${spare.last4}` }).waitFor();
      const nickname = checkout.getByLabel('Nickname (optional)');
      await expect.poll(() => nickname.evaluate((input) => input.matches(':focus'))).toBe(true);
      expect(await checkout.getByRole('radio').count()).toBe(0);
      await nickname.fill('Travel');
      await checkout.getByLabel('Make it my default card').check();
      await tab.shot('edit-wallet-01-card');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      expect(await wallet.findCard(spare.id)).toMatchObject({ nickname: 'Travel', isDefault: true });

      await checkout.getByRole('button', { name: 'Edit this address' }).click();
      await checkout.getByRole('group', { name: 'Edit address' }).waitFor();
      await expect
        .poll(() => checkout.getByLabel('First name').evaluate((input) => input.matches(':focus')))
        .toBe(true);
      const street = checkout.getByLabel('Street address');
      expect(await street.inputValue()).toBe('100 Congress Ave');
      await street.fill('200 Congress Ave');
      await tab.shot('edit-wallet-02-address');
      // A mistake is caught before anything is sent.
      await checkout.getByLabel('ZIP code').fill('787');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await checkout.getByText('Enter a 5-digit ZIP code.').waitFor();
      await checkout.getByLabel('ZIP code').fill('78701');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await checkout.getByRole('button', { name: 'Continue' }).click();
      const pay = checkout.getByRole('button', { name: /^Pay \$/ });
      await pay.waitFor();
      expect(await checkout.getByText('200 Congress Ave', { exact: false }).count()).toBeGreaterThan(0);
      await pay.click();
      const [paidOrderId] = (await waitForSuccess(page)) as [string];
      expect(paidOrderId).toBe(orderId);

      // Saved in the old address's place: the defaults and the cards' billing moved to it.
      const [corrected, ...others] = await wallet.listAddresses(shopper.id);
      expect(corrected).toMatchObject({ address1: '200 Congress Ave', isDefaultShipping: true });
      expect(others.map((a) => a.id)).not.toContain(home.id);
      expect((await wallet.findAddress(home.id))?.removedAt).toEqual(expect.any(Number));
      expect((await wallet.findCard(spare.id))?.billingAddressId).toBe(corrected?.id);
      const order = await orders.get(harness.merchant.merchantId, orderId);
      expect(order.payment).toMatchObject({ paymentId: spare.id, shippingAddressId: corrected?.externalId });
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('gives a card a new billing address typed in the edit form, keeps the shipping choice, and pays', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const { wallet, orders } = service.services;
    const shopper = await testShopper(service);
    const before = await wallet.listAddresses(shopper.id);
    const shipping = before.find((a) => a.isDefaultShipping);
    if (!shipping) throw new Error('the test shopper has no default shipping address');

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      const selected = checkout.getByRole('radio', { checked: true });
      await selected.waitFor({ state: 'attached' });
      const paymentId = await selected.getAttribute('value');
      const card = await wallet.findCard(paymentId ?? '');
      if (!card) throw new Error('no card is selected');

      await checkout.getByRole('button', { name: 'Edit this card' }).click();
      const place = { address1: '9 Lavaca St', city: 'Austin', state: 'tx', zip: '78701' };
      const form = await typeNewBillingAddress(checkout, place);
      await tab.shot('edit-wallet-03-new-billing');
      // A mistake is caught before anything is saved.
      await form.getByLabel('ZIP code').fill('787');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await form.getByText('Enter a 5-digit ZIP code.').waitFor();
      expect(await wallet.listAddresses(shopper.id)).toHaveLength(before.length);
      await form.getByLabel('ZIP code').fill('78701');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      // The shipping choice is the one it was: the new address is the card's, for billing.
      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      const street = (address1: string) => checkout.getByRole('radio', { name: new RegExp(address1) });
      await expect.poll(() => street(shipping.address1).isChecked()).toBe(true);
      expect(await street('9 Lavaca St').isChecked()).toBe(false);
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout.getByRole('button', { name: /^Pay \$/ }).click();
      await waitForSuccess(page);

      const added = (await wallet.listAddresses(shopper.id)).filter(
        (a) => !before.some((b) => b.id === a.id),
      );
      expect(added).toMatchObject([{ address1: '9 Lavaca St', state: 'TX', zip: '78701' }]);
      expect((await wallet.findCard(card.id))?.billingAddressId).toBe(added[0]?.id);
      const order = await orders.get(harness.merchant.merchantId, orderId);
      expect(order.payment).toMatchObject({
        paymentId: card.id,
        shippingAddressId: shipping.externalId,
        billingAddressId: added[0]?.externalId,
      });
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
