/**
 * End to end in real Chromium: the staging test shopper's saved cards have all expired, so the card step
 * opens on "Add a card"; the shopper types a new card, keeps the saved billing address and pays with the
 * new card through the sandbox gateway, the security code typed with it going with that payment. Then
 * the shopper removes that card again, and the expired ones all at once, and adds a card with a new
 * billing address typed in, which a refused first try does not save twice. Screenshots to
 * docs/screenshots/add-card-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../../packages/server/src/sandbox/seed.js';
import {
  type Harness,
  openTab,
  pressWalletButton,
  recordedCalls,
  shipAndPay,
  signIn,
  startHarness,
  type Tab,
  testShopper,
  typeNewBillingAddress,
  waitForSuccess,
} from './support.js';

/** The next request to `url` is answered 503 "Try again in a moment." instead of reaching the service. */
const refuseOnce = (tab: Tab, url: string) =>
  tab.context.route(
    url,
    (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ errorCode: 'SERVICE_UNAVAILABLE', errorMessage: 'Try again in a moment.' }),
      }),
    { times: 1 },
  );

describe('a shopper whose cards have expired adds one, pays with it and removes it in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('opens on the new card form, saves the card and pays with it and its security code', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop, merchant } = harness;
    const { wallet, db } = service.services;
    const shopper = await testShopper(service);
    await db.kysely
      .updateTable('cards')
      .set({ exp_year: 2001 })
      .where('shopper_id', '=', shopper.id)
      .execute();

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    const payments: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/pay') && request.method() === 'POST')
        payments.push(request.postDataJSON());
    });
    const shot = (name: string) => tab.shot(`add-card-${name}`);

    try {
      await page.goto(shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);

      await checkout.getByText('Your saved cards have expired.').waitFor();
      // The form opened by itself: its first field has focus.
      await expect.poll(() => checkout.locator(':focus').getAttribute('autocomplete')).toBe('cc-number');
      const number = checkout.getByLabel('Card number');
      await number.fill('4242 4242 4242 4242');
      await checkout.getByLabel('Expiry (MM/YY)').fill('12/30');
      await checkout.getByLabel('Security code (CVV)').fill('123');
      expect(await checkout.getByLabel('Name on card').inputValue()).toBe('Taylor Shopper');
      const billing = checkout.getByLabel('Billing address');
      expect(await billing.locator('option:checked').textContent()).toContain('100 Congress Ave');
      await shot('01-form');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      await shipAndPay(checkout);
      const [paidOrderId, customerInfo] = (await waitForSuccess(page)) as [string, Record<string, unknown>];
      expect(paidOrderId).toBe(orderId);
      expect(customerInfo).toMatchObject({
        email: TEST_SHOPPER_EMAIL,
        paymentMethod: { last4CardNumber: '4242', expMonth: 12, expYear: 2030 },
      });
      expect(payments).toEqual([expect.objectContaining({ cvv: '123' })]);
      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: merchant.apiKey });
      expect(order.json).toMatchObject({ orderId, status: 'SUCCEEDED' });

      const saved = (await wallet.listCards(shopper.id)).filter((card) => card.last4 === '4242');
      expect(saved).toMatchObject([{ isDefault: true, needsCvv: false, expYear: 2030 }]);
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('removes the card after a confirmation; with no card left that can pay, the new card form opens', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const [usable] = (await service.services.wallet.listCards(shopper.id)).filter(
      (card) => card.expYear > 2001,
    );
    if (!usable) throw new Error('the first test left no card that can pay');

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      const card = checkout.getByRole('radio', { name: new RegExp(`ending in ${usable.last4}, .*default`) });
      await card.waitFor({ state: 'attached' });
      expect(await card.isChecked()).toBe(true);

      await checkout.getByRole('button', { name: 'Remove this card' }).click();
      await checkout.getByText(`Remove Visa ending in ${usable.last4} from your wallet?`).waitFor();
      // Escape keeps the card, as "Keep it" does, without closing the checkout; focus is back on the link.
      await expect.poll(() => checkout.locator(':focus').textContent()).toContain('Remove card');
      await page.keyboard.press('Escape');
      await expect.poll(() => checkout.locator(':focus').textContent()).toBe('Remove this card');
      expect(
        await checkout.getByText(`Remove Visa ending in ${usable.last4} from your wallet?`).count(),
      ).toBe(0);
      expect((await recordedCalls(page)).onClose).toEqual([]);
      await checkout.getByRole('button', { name: 'Remove this card' }).click();
      await tab.shot('add-card-02-remove');
      await checkout.getByRole('button', { name: 'Remove card' }).click();

      await checkout.getByText(`Visa ending in ${usable.last4} was removed from your wallet.`).waitFor({
        state: 'attached',
      });
      await checkout.getByText('Your saved cards have expired.').waitFor();
      await expect.poll(() => checkout.locator(':focus').getAttribute('autocomplete')).toBe('cc-number');
      const left = await service.services.wallet.listCards(shopper.id);
      expect(left.map((entry) => entry.id)).not.toContain(usable.id);
      expect((await service.services.wallet.findCard(usable.id))?.removedAt).toEqual(expect.any(Number));
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('removes every expired card at once (they cannot be selected), keeping what it removed when one fails', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const expired = await service.services.wallet.listCards(shopper.id);
    expect(expired.length).toBeGreaterThan(1);
    expect(expired.every((card) => card.expYear === 2001)).toBe(true);

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    // The last removal fails once: the others are gone, and the wallet says so.
    const failing = expired[expired.length - 1] as (typeof expired)[number];
    await refuseOnce(tab, `**/checkout/api/wallet/cards/${failing.id}`);
    try {
      await page.goto(shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      await checkout.getByRole('button', { name: 'Choose a saved card' }).click();
      await checkout.getByRole('button', { name: 'Remove expired cards' }).click();
      await checkout.getByText(`Remove the ${expired.length} expired cards from your wallet?`).waitFor();
      await checkout.getByRole('button', { name: 'Remove cards' }).click();

      await checkout.getByRole('alert').getByText('Try again in a moment.').waitFor();
      await expect.poll(() => checkout.getByRole('radio').count()).toBe(1);
      expect(await checkout.getByRole('radio').getAttribute('aria-label')).toContain(
        `ending in ${failing.last4}`,
      );
      expect((await service.services.wallet.listCards(shopper.id)).map((card) => card.id)).toEqual([
        failing.id,
      ]);

      // The question is now about the card left, and asks again.
      await checkout.getByText(`Remove Visa ending in ${failing.last4} from your wallet?`).waitFor();
      await checkout.getByRole('button', { name: 'Remove card' }).click();
      await checkout
        .getByText(`Visa ending in ${failing.last4} was removed from your wallet.`)
        .waitFor({ state: 'attached' });
      await checkout.getByText('Your wallet has no cards yet.').waitFor();
      await checkout.getByLabel('Card number').waitFor();
      expect(await service.services.wallet.listCards(shopper.id)).toEqual([]);
      // The one error logged is the refused request's.
      expect(consoleErrors.filter((error) => !error.includes(failing.id))).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('adds a card with a new billing address; a refused try keeps the address for the next, saved once', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const { wallet } = service.services;
    const shopper = await testShopper(service);
    const before = await wallet.listAddresses(shopper.id);
    expect(before.length).toBeGreaterThan(0);

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    await refuseOnce(tab, '**/checkout/api/wallet/cards');
    try {
      await page.goto(shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      await checkout.getByText('Your wallet has no cards yet.').waitFor();
      await checkout.getByLabel('Card number').fill('5555 5555 5555 4444');
      await checkout.getByLabel('Expiry (MM/YY)').fill('11/31');
      await checkout.getByLabel('Security code (CVV)').fill('321');
      await typeNewBillingAddress(checkout, {
        address1: '7 Rainey St',
        city: 'Austin',
        state: 'TX',
        zip: '78701',
      });
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      await checkout.getByRole('alert').getByText('Try again in a moment.').waitFor();
      const added = async () =>
        (await wallet.listAddresses(shopper.id)).filter((a) => !before.some((b) => b.id === a.id));
      expect(await added()).toMatchObject([{ address1: '7 Rainey St' }]);
      // The saved address is now the one chosen: trying again does not save it a second time.
      await expect
        .poll(() => checkout.getByLabel('Billing address').locator('option:checked').textContent())
        .toContain('7 Rainey St');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();

      await shipAndPay(checkout);
      await waitForSuccess(page);
      const [address] = await added();
      expect(await added()).toHaveLength(1);
      const cards = await wallet.listCards(shopper.id);
      expect(cards).toMatchObject([{ last4: '4444', billingAddressId: address?.id }]);
      // The one error logged is the refused request's.
      expect(consoleErrors.filter((error) => !error.includes('503'))).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
