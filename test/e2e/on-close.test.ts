/**
 * The shopper closes the checkout without paying, with its "Close" button or with Escape: `onClose()` is
 * called once and nothing else, the modal goes away, focus is back on the wallet button and the page
 * scrolls again.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../packages/server/src/test-support/wait.js';
import {
  buttonOptions,
  CHECKOUT_FRAME,
  type Harness,
  openTab,
  pressWalletButton,
  recordedCalls,
  startHarness,
} from './support.js';

/** True when focus is on the "Pay with Wallet" button inside the merchant's #wallet-button host. */
const walletButtonFocused = (page: Page) =>
  page.evaluate(`(() => {
    const host = document.getElementById('wallet-button');
    const inner = host?.shadowRoot?.activeElement;
    return document.activeElement === host && inner?.textContent === 'Pay with Wallet';
  })()`) as Promise<boolean>;

/** Whether focus is in the checkout's frame (inside the SDK's shadow root). */
const CHECKOUT_FOCUSED = "document.activeElement?.shadowRoot?.activeElement?.tagName === 'IFRAME'";

/** Whether the SDK heard the checkout is ready: it hides its own close button then. */
const CHECKOUT_READY =
  "Array.from(document.body.children).some((host) => host.shadowRoot?.querySelector('.wc-close')?.hidden === true)";

/** Scrolls the page down and reports whether it moved. */
const pageScrolls = (page: Page) =>
  page.evaluate(`(() => {
    window.scrollTo(0, 0);
    window.scrollBy(0, 400);
    const moved = window.scrollY > 0;
    window.scrollTo(0, 0);
    return moved && getComputedStyle(document.documentElement).overflow !== 'hidden';
  })()`) as Promise<boolean>;

describe('onClose in real Chromium', () => {
  let harness: Harness | undefined;
  let url = '';
  beforeAll(async () => {
    harness = await startHarness();
    // A long page, so scroll locking shows.
    url = harness.page('/long', { body: '<div style="height: 3000px"></div>' });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it.each([
    { how: 'the checkout’s Close button', name: 'button' },
    { how: 'Escape', name: 'escape' },
  ])(
    'closing with $how → onClose() once, focus back on the wallet button, scroll unlocked',
    async ({ name }) => {
      if (!harness) throw new Error('setup did not finish');
      const tab = await openTab(harness.browser);
      const { page, checkout } = tab;
      try {
        await page.goto(url);
        await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
        expect(await pageScrolls(page)).toBe(true);
        const orderId = await pressWalletButton(page);
        await checkout.getByLabel('Email').waitFor();
        expect(await pageScrolls(page)).toBe(false);
        await tab.shot(`on-close-${name}-open`);

        if (name === 'button') {
          await checkout.getByRole('button', { name: 'Close' }).click();
        } else {
          await checkout.getByLabel('Email').focus();
          // The key goes down in the checkout's frame, which the page then removes. Its release is sent
          // once the frame is gone: a release sent while a cross-site frame is being torn down can wait
          // for ever on Chromium's acknowledgement of the input event (press() did, about 1 run in 8).
          await page.keyboard.down('Escape');
        }
        await page.waitForFunction('window.calls.onClose.length > 0');
        await page.locator(CHECKOUT_FRAME).waitFor({ state: 'detached' });
        if (name === 'escape') await page.keyboard.up('Escape');
        // A round trip to the service, so a late second call would have been recorded.
        await harness.service.call('GET', `/orders/${orderId}`, { apiKey: harness.merchant.apiKey });
        const calls = await recordedCalls(page);
        expect(calls.onClose).toEqual([[]]);
        expect(calls.success).toEqual([]);
        expect(calls.error).toEqual([]);
        expect(await walletButtonFocused(page)).toBe(true);
        expect(await pageScrolls(page)).toBe(true);
        expect(tab.consoleErrors).toEqual([]);
      } finally {
        await tab.close();
      }
    },
    60_000,
  );

  it('closing while the order is being created → onClose at once, then getOrderId, and the order is abandoned', async () => {
    if (!harness) throw new Error('setup did not finish');
    const slowOrder = harness.page('/slow-order', {
      options: buttonOptions({
        orderDetailsCallback: `async (actions) => {
          await new Promise((resolve) => { window.releaseOrder = resolve; });
          return actions.createOrder({ lineItems: [{ SKU: 'TEE', amount: 2500 }] });
        }`,
      }),
    });
    const tab = await openTab(harness.browser);
    const { page } = tab;
    try {
      await page.goto(slowOrder);
      await page.getByRole('button', { name: 'Pay with Wallet' }).click();
      await page.waitForFunction("typeof window.releaseOrder === 'function'");
      await page.keyboard.press('Escape');
      await page.waitForFunction('window.calls.onClose.length === 1');
      await page.locator(CHECKOUT_FRAME).waitFor({ state: 'detached' });

      await page.evaluate('window.releaseOrder()');
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const calls = await recordedCalls(page);
      const [[orderId]] = calls.getOrderId as [[string]];
      expect(calls.onClose).toEqual([[]]);
      expect(calls.success).toEqual([]);
      expect(calls.error).toEqual([]);
      const status = () =>
        harness?.service
          .call('GET', `/orders/${orderId}`, { apiKey: harness.merchant.apiKey })
          .then((order) => order.json.status === 'ABANDONED');
      await until(async () => status());
      await expect(page.locator(CHECKOUT_FRAME).count()).resolves.toBe(0);
      expect(await walletButtonFocused(page)).toBe(true);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('leaves Escape pressed on the merchant page to the checkout once it shows: focus goes back into it', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(url);
      const orderId = await pressWalletButton(page);
      await checkout.getByLabel('Email').waitFor();
      // The field shows a moment before the SDK hears of it; until then, Escape on the page closes.
      await page.waitForFunction(CHECKOUT_READY);
      // Focus taken out of its frame, onto the page (by a script of the shop's, say).
      await page.evaluate(`(() => {
        let active = document.activeElement;
        while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
        active?.blur();
      })()`);
      expect(await page.evaluate(CHECKOUT_FOCUSED)).toBe(false);
      await page.keyboard.press('Escape');
      await page.waitForFunction(CHECKOUT_FOCUSED);
      const open = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(open.json).toMatchObject({ status: 'CREATED' });
      expect((await recordedCalls(page)).onClose).toEqual([]);
      await expect(page.locator(CHECKOUT_FRAME).count()).resolves.toBe(1);

      // The checkout's own Escape closes it, with onClose and the order abandoned.
      await page.keyboard.down('Escape');
      await page.waitForFunction('window.calls.onClose.length > 0');
      await page.locator(CHECKOUT_FRAME).waitFor({ state: 'detached' });
      await page.keyboard.up('Escape');
      const closed = await harness.service.call('GET', `/orders/${orderId}`, {
        apiKey: harness.merchant.apiKey,
      });
      expect(closed.json).toMatchObject({ status: 'ABANDONED' });
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
