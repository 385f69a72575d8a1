/**
 * Refused entries and codes in real Chromium, as a screen reader user meets them: a refused email, code
 * or security code takes focus, marked invalid; a code refused by the server is cleared, and the field
 * is described by the refusal and by where the code went; a code sent again says so and keeps focus in
 * the code field; once no code can be tried, focus goes to sending a new one; a pasted code keeps its
 * six digits whatever spaces or dashes come with it. The page's clock is Playwright's, moved on by the
 * test past the 30 s wait before another code: no sleeps.
 */
import type { Frame, FrameLocator, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestShopperCard, visaNumber } from '../../packages/server/src/test-support/cards.js';
import {
  chooseCard,
  EMAIL,
  type Harness,
  openTab,
  pressWalletButton,
  ship,
  signIn,
  startHarness,
  TEST_CODE,
} from './support.js';

/** 30 s and a little: the wait before another code may be asked for (packages/checkout-ui/src/flow.ts). */
const RESEND_WAIT = '00:31';

/** The name of what has focus in the checkout: its label, or its text. */
const FOCUSED = `(() => {
  const active = document.activeElement;
  return (active?.labels?.[0]?.textContent ?? active?.textContent ?? '').trim();
})()`;

/** The texts a control's `aria-describedby` points to. */
async function descriptions(frame: Frame, control: Locator): Promise<string[]> {
  const ids = (await control.getAttribute('aria-describedby')) ?? '';
  return (await frame.evaluate(
    `${JSON.stringify(ids.split(' ').filter(Boolean))}.map((id) => document.getElementById(id)?.textContent ?? '')`,
  )) as string[];
}

/** Enters `code` and presses Verify. */
async function verify(checkout: FrameLocator, code: string): Promise<void> {
  await checkout.getByLabel('One-time code').fill(code);
  await checkout.getByRole('button', { name: 'Verify' }).click();
}

describe('refused entries and codes in real Chromium', () => {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('email and code: focus on the refused field, codes pasted whole, wrong codes cleared, resends said', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await tab.context.clock.install();
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      const email = checkout.getByLabel('Email');
      await email.waitFor();
      const frame = page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
      if (!frame) throw new Error('no checkout frame');

      await email.fill('foo@bar');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('Email');
      expect(await email.getAttribute('aria-invalid')).toBe('true');
      await email.fill(EMAIL);
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      expect((await descriptions(frame, code)).join(' ')).toMatch(/^We sent a 6-digit code to /);
      for (const pasted of ['123 456', '123-456', ' 123456 ']) {
        await code.fill(pasted);
        expect(await code.inputValue(), pasted).toBe('123456');
      }

      await verify(checkout, '12345');
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('One-time code');
      expect(await code.getAttribute('aria-invalid')).toBe('true');

      await verify(checkout, '000000');
      const refusal = 'That code is not right. 4 tries left.';
      await checkout.getByRole('alert').filter({ hasText: refusal }).waitFor();
      await expect.poll(() => code.inputValue()).toBe('');
      expect(await code.getAttribute('aria-invalid')).toBe('true');
      expect(await descriptions(frame, code)).toEqual([expect.stringMatching(/^We sent a 6-digit/), refusal]);
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('One-time code');
      await code.pressSequentially('1');
      expect(await code.getAttribute('aria-invalid')).toBeNull();

      const newCodeSent = checkout.getByRole('status').filter({ hasText: /^We sent a new code to / });
      await page.clock.fastForward(RESEND_WAIT);
      await checkout.getByRole('button', { name: 'Resend code' }).click();
      await newCodeSent.waitFor();
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('One-time code');

      // Five wrong codes lock this one: focus goes to sending a new code, still waiting its turn.
      for (const answer of ['4 tries left', '3 tries left', '2 tries left', '1 try left', 'Too many wrong']) {
        await verify(checkout, '000000');
        await checkout.getByRole('alert').filter({ hasText: answer }).waitFor();
      }
      expect(await code.isDisabled()).toBe(true);
      await expect.poll(() => frame.evaluate(FOCUSED)).toMatch(/^Resend code in /);
      await page.clock.fastForward(RESEND_WAIT);
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('Send a new code');
      await page.keyboard.press('Enter');
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('One-time code');
      await newCodeSent.waitFor();
      await verify(checkout, TEST_CODE);
      await checkout.getByRole('heading', { name: 'Choose a card' }).waitFor();
    } finally {
      await tab.close();
    }
  }, 90_000);

  it('a security code too short on the review takes focus, marked invalid', async () => {
    if (!harness) throw new Error('setup did not finish');
    const card = await addTestShopperCard(harness.service.services.wallet, visaNumber(7), true);
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      const frame = page.frames().find((candidate) => candidate.url().includes(`/checkout/${orderId}`));
      if (!frame) throw new Error('no checkout frame');
      await chooseCard(checkout, card.last4);
      await ship(checkout);
      const cvv = checkout.getByLabel('Security code (CVV)');
      await cvv.fill('1');
      await checkout.getByRole('button', { name: /^Pay \$/ }).click();
      await expect.poll(() => frame.evaluate(FOCUSED)).toBe('Security code (CVV)');
      expect(await cvv.getAttribute('aria-invalid')).toBe('true');
    } finally {
      await tab.close();
    }
  }, 60_000);
});
