/**
 * End to end in real Chromium: a shopper signed in on a shared computer sees whose wallet is open and
 * signs out with "Not you? Sign out": the sign-in ends on the server, and the checkout goes back to an
 * empty Email step. Screenshot to docs/screenshots/sign-out-01-signed-in.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../../packages/server/src/sandbox/seed.js';
import {
  type Harness,
  openTab,
  pressWalletButton,
  signIn,
  signInsOf,
  startHarness,
  testShopper,
} from './support.js';

describe('a shopper signs out of the checkout in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('says who is signed in, and "Not you? Sign out" ends the sign-in and empties the Email step', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const liveSignIns = () => signInsOf(service, 'shopper_tokens', shopper.id);

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      await page.goto(shop.url);
      await pressWalletButton(page);
      await signIn(checkout);
      await checkout.getByRole('radio', { name: /ending in 1111/ }).waitFor({ state: 'attached' });
      await checkout.getByText(`Signed in as ${TEST_SHOPPER_EMAIL}.`).waitFor();
      expect(await liveSignIns()).toBe(1);
      await tab.shot('sign-out-01-signed-in');

      await checkout.getByRole('button', { name: 'Not you? Sign out' }).click();
      await checkout.getByRole('heading', { name: 'Check out with your wallet' }).waitFor();
      await checkout.getByRole('status').filter({ hasText: 'You are signed out.' }).waitFor();
      const email = checkout.getByLabel('Email');
      expect(await email.inputValue()).toBe('');
      await expect.poll(() => email.evaluate((input) => input.matches(':focus'))).toBe(true);
      expect(await liveSignIns()).toBe(0);

      // Anyone may sign in again from here.
      await signIn(checkout);
      await checkout.getByRole('radio', { name: /ending in 1111/ }).waitFor({ state: 'attached' });
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  });
});
