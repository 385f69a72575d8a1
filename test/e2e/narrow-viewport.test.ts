/**
 * A phone-sized viewport, 375 px wide: every step of the checkout fits without horizontal scrolling, and
 * the shopper can pay.
 */
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKOUT_FRAME,
  chooseCard,
  type Harness,
  openTab,
  pressWalletButton,
  signIn,
  startHarness,
  waitForSuccess,
} from './support.js';

const WIDTH = 375;

/** Horizontal overflow of the page and of the checkout document, and the frame's box on the page. */
async function layout(page: Page, frame: Frame) {
  type Widths = { scroll: number; client: number };
  // Expressions, as the test project has no DOM types.
  const pageWidths = (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  )) as Widths;
  const frameWidths = (await frame.evaluate(
    '({ scroll: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth), client: document.documentElement.clientWidth })',
  )) as Widths;
  const box = await page.locator(CHECKOUT_FRAME).boundingBox();
  return { pageWidths, frameWidths, box };
}

describe('a 375 px wide viewport in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('each step fits the width without horizontal scroll, and the shopper pays', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: WIDTH, height: 740 });
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      await checkout.getByLabel('Email').waitFor();
      const frame = page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
      if (!frame) throw new Error('no checkout frame');
      const fits = async (step: string) => {
        await tab.shot(`narrow-${step}`);
        const { pageWidths, frameWidths, box } = await layout(page, frame);
        expect(pageWidths.scroll, `${step}: the page scrolls sideways`).toBeLessThanOrEqual(
          pageWidths.client,
        );
        expect(frameWidths.scroll, `${step}: the checkout scrolls sideways`).toBeLessThanOrEqual(
          frameWidths.client,
        );
        expect(box, `${step}: no checkout frame`).not.toBeNull();
        expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
        expect((box?.x ?? 0) + (box?.width ?? Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(WIDTH);
      };
      await fits('01-email');
      await signIn(checkout);
      await checkout.getByRole('radio', { name: /^Visa ending in 1111\b/ }).waitFor({ state: 'attached' });
      await fits('02-card');
      await chooseCard(checkout, '1111');
      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      await checkout.getByRole('radio').first().waitFor({ state: 'attached' });
      await fits('03-shipping-address');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await fits('04-shipping-method');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      const pay = checkout.getByRole('button', { name: /^Pay \$/ });
      await pay.waitFor();
      await fits('05-summary');
      await pay.click();
      expect((await waitForSuccess(page))[0]).toBe(orderId);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
