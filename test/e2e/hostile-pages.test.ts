/**
 * Pages of other sites against the default flow, in real Chromium: a third-party frame on the shop's page
 * posting the checkout's messages, a site framing the shop's page (clickjacking), and a link that opens the
 * checkout of an order made outside any browser on its own. None of them gets a payment reported or taken.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHECKOUT_FRAME,
  type Harness,
  type MerchantSite,
  openTab,
  orderStatus,
  payWithCard,
  pressWalletButton,
  recordedCalls,
  startHarness,
  startMerchantSite,
  waitForSuccess,
} from './support.js';

/** What a hostile frame posts: the checkout's own message shapes, with an order id of its making. */
const FORGED = `[
  { source: 'wallet-checkout', type: 'success', orderId: 'ord_FORGED', customerInfo: {}, shippingInfo: {},
    billingInfo: {}, shippingMethod: {}, taxes: 0, transactionDetails: {} },
  { source: 'wallet-checkout', type: 'error', orderId: 'ord_FORGED', errorCode: '990', errorMessage: 'Card was declined' },
  { source: 'wallet-checkout', type: 'close' },
]`;

describe('hostile pages in real Chromium', () => {
  let harness: Harness | undefined;
  /** Another origin than the shop's and the service's: the third party. */
  let stranger: MerchantSite | undefined;
  beforeAll(async () => {
    harness = await startHarness();
    stranger = await startMerchantSite('127.0.0.1');
  });
  afterAll(async () => {
    await stranger?.close();
    await harness?.close();
  });

  it("ignores the checkout's messages from a third-party frame on the shop's page", async () => {
    if (!harness || !stranger) throw new Error('setup did not finish');
    const frame = stranger.serve(
      '/ad',
      `<!doctype html><script>window.forge = () => ${FORGED}.forEach((message) => parent.postMessage(message, '*'));</script>`,
    );
    const url = harness.page('/with-ad', {
      body: `<iframe id="ad" title="Ad" src="${frame}"></iframe>`,
      // The shop's page notes what reached it, to know the forged messages arrived before the payment.
      before: `window.heard = [];
        window.addEventListener('message', (event) => window.heard.push(event.origin));`,
    });
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(url);
      const orderId = await pressWalletButton(tab.page);
      await tab.checkout.getByLabel('Email').waitFor();
      const ad = tab.page.frames().find((candidate) => candidate.url() === frame);
      await ad?.evaluate('window.forge()');
      await tab.page.waitForFunction(
        `window.heard.filter((origin) => origin === ${JSON.stringify(stranger.origin)}).length === 3`,
      );
      expect(await recordedCalls(tab.page)).toMatchObject({ success: [], error: [], onClose: [] });
      await payWithCard(tab.checkout);
      const [paidOrderId] = await waitForSuccess(tab.page);
      expect(paidOrderId).toBe(orderId);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it("shows no checkout inside another site's frame around the shop's page", async () => {
    if (!harness || !stranger) throw new Error('setup did not finish');
    const shopUrl = harness.page('/framed');
    const top = stranger.serve(
      '/frames-the-shop',
      `<!doctype html><iframe id="shop" src="${shopUrl}"></iframe>`,
    );
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(top);
      const shop = tab.page.frameLocator('#shop');
      const refused = tab.page.waitForEvent('console', (message) =>
        message.text().includes(`frame-ancestors ${harness?.shop.origin}`),
      );
      await shop.getByRole('button', { name: 'Pay with Wallet' }).click();
      await refused;
      expect(
        tab.page.frames().some((frame) => frame.url().startsWith(`${harness?.service.url}/checkout/`)),
      ).toBe(false);
      await expect(shop.frameLocator(CHECKOUT_FRAME).getByLabel('Email').count()).resolves.toBe(0);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('takes no payment in a checkout opened on its own, for an order made outside the shop', async () => {
    if (!harness || !stranger) throw new Error('setup did not finish');
    // Anyone can name the shop's origin outside a browser, and describe the order as they please.
    const created = await harness.service.call('POST', '/checkout/orders', {
      headers: { origin: harness.shop.origin },
      body: {
        merchantId: harness.merchant.merchantId,
        order: { lineItems: [{ SKU: 'GIFT', name: 'Gift card: confirm your refund', amount: 50_000 }] },
      },
    });
    const orderId = created.json.orderId as string;
    const lure = stranger.serve(
      '/lure',
      `<!doctype html><a href="${harness.service.url}/checkout/${orderId}">Refund</a>`,
    );
    const tab = await openTab(harness.browser);
    try {
      await tab.page.goto(lure);
      await tab.page.getByRole('link', { name: 'Refund' }).click();
      await expect(tab.page.getByRole('alert').textContent()).resolves.toMatch(/from the shop’s page/);
      expect(await tab.page.getByLabel('Email').count()).toBe(0);
      expect(await tab.page.getByText('Gift card').count()).toBe(0);
      expect(await orderStatus(harness, orderId)).toBe('CREATED');
    } finally {
      await tab.close();
    }
  }, 60_000);
});
