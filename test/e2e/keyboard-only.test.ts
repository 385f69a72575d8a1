/**
 * Keyboard only (Tab, Enter, Space, and typing into fields): from the wallet button to success. While the
 * checkout is open, Tab never lands on the merchant page behind it.
 */
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMAIL, type Harness, openTab, startHarness, TEST_CODE, waitForSuccess } from './support.js';

/** What has focus: in the page (looking into shadow roots), or inside the checkout frame. */
async function focused(
  page: Page,
  frame: Frame | undefined,
): Promise<{ where: 'page' | 'checkout'; name: string }> {
  // Expressions, as the test project has no DOM types.
  const inPage = (await page.evaluate(`(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return {
      tag: active?.tagName ?? '',
      name: active?.getAttribute('aria-label') || active?.textContent || '',
    };
  })()`)) as { tag: string; name: string };
  if (inPage.tag !== 'IFRAME' || !frame) return { where: 'page', name: inPage.name.trim() };
  const inFrame = (await frame.evaluate(`(() => {
    const active = document.activeElement;
    const label = active?.id ? document.querySelector('label[for="' + active.id + '"]')?.textContent : '';
    return (
      active?.getAttribute('aria-label') ||
      label ||
      active?.closest('label')?.textContent ||
      active?.textContent ||
      ''
    ).trim();
  })()`)) as string;
  return { where: 'checkout', name: inFrame };
}

/** Opens the shop's checkout with a click on the wallet button; its frame, once the email field shows. */
async function openCheckout(page: Page, checkout: FrameLocator, shopUrl: string): Promise<Frame | undefined> {
  await page.goto(shopUrl);
  await page.getByRole('button', { name: 'Pay with Wallet' }).click();
  await page.waitForFunction('window.calls.getOrderId.length === 1');
  const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
  await checkout.getByLabel('Email').waitFor();
  return page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
}

describe('keyboard-only checkout in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('Tab, Enter and Space take the shopper from the button to success', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    let frame: Frame | undefined;
    const visited: string[] = [];
    /** Presses Tab until the focused control's name matches; focus must stay in the checkout. */
    const tabTo = async (name: RegExp, where: 'page' | 'checkout' = 'checkout') => {
      for (let presses = 0; presses < 30; presses += 1) {
        const now = await focused(page, frame);
        if (now.where === where && name.test(now.name)) return;
        if (where === 'checkout') {
          expect(now.where, `focus left the checkout after ${visited.join(' → ')}`).toBe('checkout');
        }
        await page.keyboard.press('Tab');
        const next = await focused(page, frame);
        visited.push(`${next.where}:${next.name}`);
      }
      throw new Error(`Tab never reached ${name} (${visited.join(' → ')})`);
    };

    try {
      await page.goto(harness.shop.url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
      await tabTo(/^Pay with Wallet$/, 'page');
      await page.keyboard.press('Enter');
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      await checkout.getByLabel('Email').waitFor();
      frame = page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
      expect(frame).toBeDefined();

      await tabTo(/^Email/);
      await page.keyboard.type(EMAIL);
      await page.keyboard.press('Enter');

      // The field is disabled until the code has been sent.
      const codeField = checkout.getByLabel('One-time code');
      await codeField.waitFor();
      await expect.poll(() => codeField.isEnabled()).toBe(true);
      await tabTo(/^One-time code/);
      await page.keyboard.type(TEST_CODE);
      await page.keyboard.press('Enter');

      // The default card (Visa 1111) is chosen already.
      const visa = checkout.getByRole('radio', { name: /^Visa ending in 1111\b/ });
      await visa.waitFor({ state: 'attached' });
      expect(await visa.isChecked()).toBe(true);
      await tabTo(/^Continue$/);
      await page.keyboard.press('Enter');

      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      await checkout.getByRole('radio').first().waitFor({ state: 'attached' });
      await tabTo(/^Continue$/);
      await page.keyboard.press('Space');

      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await tabTo(/^Continue$/);
      await page.keyboard.press('Enter');

      await checkout.getByRole('button', { name: /^Pay \$/ }).waitFor();
      await tabTo(/^Pay \$/);
      await tab.shot('keyboard-pay-focused');
      await page.keyboard.press('Space');

      expect((await waitForSuccess(page))[0]).toBe(orderId);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('Tab cycles inside the open checkout and never reaches the page behind it', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      const frame = await openCheckout(page, checkout, harness.shop.url);
      const seen: string[] = [];
      for (let presses = 0; presses < 12; presses += 1) {
        await page.keyboard.press('Tab');
        const now = await focused(page, frame);
        seen.push(`${now.where}:${now.name}`);
      }
      expect(
        seen.filter((entry) => entry.startsWith('page:')),
        seen.join(' → '),
      ).toEqual([]);
      // It went round, and kept going: the email field came back more than once, never stuck on nothing.
      expect(seen.filter((entry) => /^checkout:Email/.test(entry)).length, seen.join(' → ')).toBeGreaterThan(
        1,
      );
      // And backwards.
      const back: string[] = [];
      for (let presses = 0; presses < 12; presses += 1) {
        await page.keyboard.press('Shift+Tab');
        const now = await focused(page, frame);
        back.push(`${now.where}:${now.name}`);
      }
      expect(
        back.filter((entry) => entry.startsWith('page:')),
        back.join(' → '),
      ).toEqual([]);
      expect(back.filter((entry) => /^checkout:Email/.test(entry)).length, back.join(' → ')).toBeGreaterThan(
        1,
      );
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('a click on the dimmed page around the checkout leaves focus in the checkout', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      const frame = await openCheckout(page, checkout, harness.shop.url);
      const email = checkout.getByLabel('Email');
      await email.focus();
      expect(await focused(page, frame)).toEqual({
        where: 'checkout',
        name: expect.stringMatching(/^Email/),
      });
      // The top-left corner: the overlay, outside the checkout's frame.
      await page.mouse.click(4, 4);
      expect(await focused(page, frame)).toEqual({
        where: 'checkout',
        name: expect.stringMatching(/^Email/),
      });
      await page.keyboard.type('still typing');
      expect(await email.inputValue()).toBe('still typing');
    } finally {
      await tab.close();
    }
  }, 60_000);
});
