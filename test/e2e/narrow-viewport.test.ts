/**
 * A phone-sized viewport, 375 px wide: every step of the checkout fits without horizontal scrolling, and
 * the shopper can pay. Arrow keys in the card row bring the selected card into view. At 320 px (and on a
 * desktop) long names, addresses and emails wrap, and the card brand leaves the card number clear.
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
  testShopper,
  waitForSuccess,
} from './support.js';

const WIDTH = 375;
/** The narrowest phone the checkout is drawn for. */
const NARROWEST = 320;
/** One word too long for a line: nowhere to break it but anywhere. */
const LONG_WORD = 'Featherstonehaughwillowbyshirecombe';

/** The checkout's frame of `orderId`. */
function checkoutFrame(page: Page, orderId: string): Frame {
  const frame = page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
  if (!frame) throw new Error('no checkout frame');
  return frame;
}

/** Whether the checked card's tile lies wholly within the card row, which scrolls sideways. */
const CHECKED_CARD_SHOWS = `(() => {
  const tile = document.querySelector('.carousel input:checked')?.closest('label');
  const row = document.querySelector('.carousel');
  if (!tile || !row) return false;
  const t = tile.getBoundingClientRect();
  const r = row.getBoundingClientRect();
  return t.left >= r.left - 1 && t.right <= r.right + 1;
})()`;

/** Whether the first card's radio has focus, as the card step opens. */
const FIRST_CARD_FOCUSED = "document.activeElement === document.querySelector('.carousel input')";

/** The brand shown with the card number, and whether it stays clear of where the number is typed. */
const BRAND_TAG = `(() => {
  const input = Array.from(document.querySelectorAll('label')).find((l) => l.textContent === 'Card number')?.control;
  const tag = document.querySelector('.brand-tag');
  if (!input || !tag) return { brand: null, clear: false };
  const i = input.getBoundingClientRect();
  const t = tag.getBoundingClientRect();
  const textRight = i.right - parseFloat(getComputedStyle(input).paddingRight);
  return { brand: tag.textContent, clear: t.left >= textRight || t.bottom <= i.top || t.top >= i.bottom };
})()`;

/** Whether every tile of a list fits in the list, and the list in the checkout's width. */
const TILES_FIT = `Array.from(document.querySelectorAll('.option')).every((tile) => {
  const list = tile.parentElement.getBoundingClientRect();
  return tile.getBoundingClientRect().right <= list.right && list.right <= document.documentElement.clientWidth;
})`;

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

  it('arrow keys in the card row bring the selected card into view', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: WIDTH, height: 740 });
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      const cards = checkout.getByRole('radio');
      await cards.first().waitFor({ state: 'attached' });
      const frame = checkoutFrame(page, orderId);
      const count = await cards.count();
      expect(count).toBeGreaterThan(2);
      await expect.poll(() => frame.evaluate(FIRST_CARD_FOCUSED)).toBe(true);
      for (let card = 1; card < count; card += 1) {
        await page.keyboard.press('ArrowRight');
        await expect.poll(() => cards.nth(card).isChecked()).toBe(true);
        await expect
          .poll(() => frame.evaluate(CHECKED_CARD_SHOWS), { message: `card ${card + 1} shows` })
          .toBe(true);
      }
      await tab.shot('narrow-card-row-last');
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('long words wrap at 320 px, and the card brand leaves the number clear', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: NARROWEST, height: 740 });
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      await checkout
        .getByLabel('Email')
        .fill(`${LONG_WORD.toLowerCase()}.${LONG_WORD.toLowerCase()}@example.com`);
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout.getByRole('heading', { name: 'Create your wallet' }).waitFor();
      const frame = checkoutFrame(page, orderId);
      const { frameWidths } = await layout(page, frame);
      expect(frameWidths.scroll, 'the enrolment scrolls sideways').toBeLessThanOrEqual(frameWidths.client);

      await checkout.getByLabel('Card number').fill('378282246310005');
      await expect.poll(() => frame.evaluate(BRAND_TAG)).toEqual({ brand: 'American Express', clear: true });
      await tab.shot('narrow-320-enrol-amex');
    } finally {
      await tab.close();
    }
  }, 60_000);

  it.each([
    { width: NARROWEST, height: 740 },
    { width: 1024, height: 800 },
  ])(
    'a long name and address wrap in their tile at $width px',
    async (viewport) => {
      if (!harness) throw new Error('setup did not finish');
      const { service } = harness;
      const shopper = await testShopper(service);
      const addresses = await service.services.wallet.listAddresses(shopper.id);
      if (!addresses.some((address) => address.lastName === LONG_WORD)) {
        await service.services.wallet.addAddress(shopper.id, {
          firstName: 'Taylor',
          lastName: LONG_WORD,
          address1: `1 ${LONG_WORD}${LONG_WORD}${LONG_WORD} Boulevard`,
          city: 'Austin',
          state: 'TX',
          zip: '78701',
          country: 'US',
        });
      }
      const tab = await openTab(harness.browser, viewport);
      const { page, checkout } = tab;
      try {
        await page.goto(harness.shop.url);
        const orderId = await pressWalletButton(page);
        await signIn(checkout);
        await chooseCard(checkout, '1111');
        await checkout.getByRole('radio', { name: new RegExp(LONG_WORD) }).waitFor({ state: 'attached' });
        const frame = checkoutFrame(page, orderId);
        const { frameWidths } = await layout(page, frame);
        expect(frameWidths.scroll, 'the step scrolls sideways').toBeLessThanOrEqual(frameWidths.client);
        expect(await frame.evaluate(TILES_FIT), 'a tile is cut at the right').toBe(true);
        await tab.shot(`long-address-${viewport.width}`);
      } finally {
        await tab.close();
      }
    },
    60_000,
  );
});
