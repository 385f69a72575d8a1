/**
 * Accessibility in real Chromium: axe-core audits every screen a shopper meets, from the wallet button on
 * the merchant's page through the checkout's steps (errors shown, forms open) to the review, for the rules
 * of WCAG 2.2 levels A and AA. A violation fails the test with the rule, the element and what is wrong.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKOUT_FRAME,
  enterCode,
  type Harness,
  openTab,
  pressWalletButton,
  startHarness,
  waitForSuccess,
} from './support.js';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** The WCAG violations axe-core finds in `target` (a page or a frame, not the frames inside it), one line each. */
async function violations(target: Page | Frame): Promise<string[]> {
  if (!(await target.evaluate('typeof window.axe === "object"'))) await target.evaluate(AXE_SOURCE);
  const found = (await target.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_22_AA)} }, iframes: false, resultTypes: ['violations'] }).then((results) => results.violations)`,
  )) as AxeViolation[];
  return found.flatMap((violation) =>
    violation.nodes.map(
      (node) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(node.target)}: ${node.failureSummary ?? ''}`,
    ),
  );
}

/** What the checkout shows when it refuses an entry: an alert, or a field marked invalid. */
const refusal = (checkout: FrameLocator) => checkout.locator('[role="alert"], [aria-invalid="true"]').first();

async function checkoutFrame(page: Page): Promise<Frame> {
  const handle = await page.locator(CHECKOUT_FRAME).elementHandle();
  const frame = await handle?.contentFrame();
  if (!frame) throw new Error('the checkout frame is not on the page');
  return frame;
}

describe('accessibility of the button and the checkout in real Chromium (axe-core, WCAG 2.2 AA)', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  // About twenty audits of whole screens: 10 to 25 s on the machines seen, past the default 20 s.
  it('a known shopper meets no violation from the button to the review, errors and forms included', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: 1024, height: 800 });
    const { page, checkout } = tab;
    const { audits, audit } = auditor(page);
    try {
      await page.goto(harness.shop.url);
      await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
      await audit('merchant page', false);
      await pressWalletButton(page);

      const email = checkout.getByLabel('Email');
      await email.waitFor();
      await audit('email');
      await email.fill('not an email');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await refusal(checkout).waitFor();
      await audit('email, refused');
      await email.fill('test.shopper@example.com');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await enterCode(checkout, '000000');
      await refusal(checkout).waitFor();
      await audit('one-time code, wrong');
      await enterCode(checkout);

      await checkout.getByRole('radio', { name: /ending in 1111/ }).waitFor({ state: 'attached' });
      await audit('cards');
      await checkout.getByRole('button', { name: 'Remove this card' }).click();
      await checkout.getByRole('button', { name: 'Remove card' }).waitFor();
      await audit('cards, removal asked');
      await checkout.getByRole('button', { name: 'Keep it' }).click();
      await checkout.getByRole('button', { name: 'Delete my wallet' }).click();
      await checkout.getByRole('button', { name: 'Delete wallet' }).waitFor();
      await audit('cards, wallet deletion asked');
      await checkout.getByRole('button', { name: 'Keep it' }).click();
      await checkout.getByRole('button', { name: 'Add a card' }).click();
      await checkout.getByLabel('Card number').waitFor();
      await audit('new card form');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await refusal(checkout).waitFor();
      await audit('new card form, refused');
      await checkout.getByRole('button', { name: 'Choose a saved card' }).click();
      await checkout.getByRole('button', { name: 'Edit this card' }).click();
      await checkout.getByLabel('Name on card').fill('');
      await audit('card edit form');
      await checkout.getByLabel('Billing address').selectOption({ label: 'A new address' });
      await checkout.getByRole('group', { name: 'New billing address' }).waitFor();
      await audit('card edit form, new billing address');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await refusal(checkout).waitFor();
      await audit('card edit form, refused');
      await checkout.getByRole('button', { name: 'Choose a saved card' }).click();
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      await audit('shipping address');
      // The billing address of the cards: its removal is asked, then refused with the reason.
      await checkout.getByRole('button', { name: 'Remove this address' }).click();
      await checkout.getByRole('button', { name: 'Remove address' }).click();
      await refusal(checkout).waitFor();
      await audit('shipping address, removal refused');
      await checkout.getByRole('button', { name: 'Keep it' }).click();
      await checkout.getByRole('button', { name: 'Add a new address' }).click();
      await checkout.getByLabel('Street address').waitFor();
      await audit('new address form');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await refusal(checkout).waitFor();
      await audit('new address form, refused');
      await checkout.getByRole('button', { name: 'Choose a saved address' }).click();
      await checkout.getByRole('button', { name: 'Edit this address' }).click();
      await checkout.getByLabel('Street address').waitFor();
      await audit('address edit form');
      await checkout.getByRole('button', { name: 'Choose a saved address' }).click();
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await audit('shipping method');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const pay = checkout.getByRole('button', { name: /^Pay \$/ });
      await pay.waitFor();
      await audit('review');
      await pay.click();
      await waitForSuccess(page);
    } finally {
      await tab.close();
    }
    expectNone(audits);
  }, 60_000);

  it('a new shopper on a phone-sized screen meets no violation in the e-mail step and the enrolment form', async () => {
    if (!harness) throw new Error('setup did not finish');
    const tab = await openTab(harness.browser, { width: 375, height: 720 });
    const { page, checkout } = tab;
    const { audits, audit } = auditor(page);
    try {
      await page.goto(harness.shop.url);
      await pressWalletButton(page);
      const email = checkout.getByLabel('Email');
      await email.waitFor();
      await audit('email');
      await email.fill(`a11y.${Date.now()}@example.com`);
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Create your wallet' }).waitFor();
      await audit('enrolment form');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await refusal(checkout).waitFor();
      await audit('enrolment form, refused');
    } finally {
      await tab.close();
    }
    expectNone(audits);
  });
});

/**
 * Audits of named screens, each in the light and the dark colour scheme: the violations in the page (the
 * button, the modal) and, once it is open, in the checkout.
 */
function auditor(page: Page) {
  const audits: Record<string, string[]> = {};
  const audit = async (screen: string, withCheckout = true) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      audits[`${screen} (${colorScheme})`] = [
        ...(await violations(page)),
        ...(withCheckout ? await violations(await checkoutFrame(page)) : []),
      ];
    }
    await page.emulateMedia({ colorScheme: null });
  };
  return { audits, audit };
}

/** Every screen audited, none with a violation: a failure lists each screen's. */
function expectNone(audits: Record<string, string[]>): void {
  expect(Object.keys(audits).length).toBeGreaterThan(1);
  expect(audits).toEqual(Object.fromEntries(Object.keys(audits).map((screen) => [screen, []])));
}
