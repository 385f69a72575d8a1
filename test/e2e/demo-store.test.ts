/**
 * The demo store (examples/demo-store) in real Chromium against the real service and sandbox gateway: a
 * wallet payment confirmed by the store's server, guestRedirect from the email field, the processor-
 * agnostic flow with the store's own processor, a failed payment, and webhook signature checks.
 */
import { fileURLToPath } from 'node:url';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DemoStore,
  demoMerchantSettings,
  type StoreMerchant,
  startDemoStore,
} from '../../examples/demo-store/src/index.js';
import { TEST_ACTOR } from '../../packages/server/src/test-support/actor.js';
import { startTestService, type TestService } from '../../packages/server/src/test-support/service.js';
import { until } from '../../packages/server/src/test-support/wait.js';
import {
  CHECKOUT_FRAME,
  chooseCard,
  EMAIL,
  launchChromium,
  openTab,
  payWithCard,
  ship,
  signIn,
  type Tab,
} from './support.js';

// Loaded from its source by a computed path, as test/e2e/support.ts does.
const gatewayServerPath = fileURLToPath(
  new URL('../../packages/sandbox-gateway/src/server.js', import.meta.url),
);
const { startSandboxGateway } = (await import(gatewayServerPath)) as {
  startSandboxGateway(options: {
    port: number;
    host: string;
  }): Promise<{ url: string; close(): Promise<void> }>;
};

/** The test shopper lives in Austin, TX: 8.25 % tax, and Ground is the first shipping method. */
const TEE = { sku: 'TEE-ORGANIC', price: 2500 };

describe('the demo store in real Chromium', () => {
  const closers: Array<() => Promise<void>> = [];
  let service: TestService;
  let store: DemoStore;
  let browser: Browser;
  let wallet: StoreMerchant;
  let ownProcessor: StoreMerchant;

  beforeAll(async () => {
    const gateway = await startSandboxGateway({ port: 0, host: '127.0.0.1' });
    closers.push(() => gateway.close());
    service = await startTestService('sqlite', { SANDBOX_GATEWAY_URL: gateway.url });
    closers.push(() => service.close());
    // The store's port is known only once it listens: the accounts get its origin right after.
    const placeholder = demoMerchantSettings('http://127.0.0.1:1');
    wallet = await service.merchant(placeholder.wallet);
    ownProcessor = await service.merchant(placeholder.ownProcessor);
    store = await startDemoStore({
      host: '127.0.0.1',
      port: 0,
      serviceUrl: service.url,
      sandboxGatewayUrl: gateway.url,
      merchants: { wallet, ownProcessor },
    });
    closers.push(() => store.close());
    const settings = demoMerchantSettings(store.url);
    for (const [merchant, { allowedOrigins, webhookUrl }] of [
      [wallet, settings.wallet],
      [ownProcessor, settings.ownProcessor],
    ] as const) {
      await service.services.merchants.update(
        merchant.merchantId,
        { allowedOrigins, webhookUrl },
        TEST_ACTOR,
      );
    }
    browser = await launchChromium();
    closers.push(() => browser.close());
  }, 60_000);

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** A fresh shopper's browser with one T-shirt in the cart, on the checkout page of `path`. */
  async function checkoutWithTee(path: '/checkout' | '/checkout/own-processor'): Promise<Tab> {
    const tab = await openTab(browser);
    const { page } = tab;
    await page.goto(`${store.url}/products/${TEE.sku}`);
    await page.getByRole('button', { name: 'Add to cart' }).click();
    await page.waitForURL(`${store.url}/cart`);
    const link = path === '/checkout' ? 'Checkout' : 'Checkout with our own processor';
    await page.getByRole('link', { name: link, exact: true }).click();
    await page.waitForURL(`${store.url}${path}`);
    await page.getByRole('button', { name: 'Pay with Wallet' }).waitFor();
    return tab;
  }

  async function openWallet(page: Page): Promise<FrameLocator> {
    await page.getByRole('button', { name: 'Pay with Wallet' }).click();
    return page.frameLocator(CHECKOUT_FRAME);
  }

  /** The shop's order number from a confirmation or failure page URL. */
  function referenceOf(page: Page): string {
    const reference = /\/orders\/(DS-[0-9A-F]+)\//.exec(page.url())?.[1];
    if (!reference) throw new Error(`no order reference in ${page.url()}`);
    return reference;
  }

  /** The text of the store's orders-page row for `reference`. */
  async function ordersPageRow(reference: string): Promise<string> {
    const html = await (await fetch(`${store.url}/orders`)).text();
    const start = html.indexOf(`<tr data-reference="${reference}">`);
    if (start < 0) throw new Error(`order ${reference} is not on the orders page`);
    return html
      .slice(start, html.indexOf('</tr>', start))
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ');
  }

  it('the test shopper pays with the wallet and lands on the confirmation the server checked', async () => {
    const tab = await checkoutWithTee('/checkout');
    const { page } = tab;
    try {
      const checkout = await openWallet(page);
      await payWithCard(checkout, '1111');
      await page.waitForURL(/\/confirmation\?orderId=ord_/);
      await page.getByRole('heading', { name: 'Thank you!' }).waitFor();
      const reference = referenceOf(page);
      const orderId = new URL(page.url()).searchParams.get('orderId') as string;

      // What Wallet Checkout says, through the merchant API, is what the page shows.
      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: wallet.apiKey });
      expect(order.json).toMatchObject({
        merchantOrderId: reference,
        status: 'SUCCEEDED',
        subtotal: TEE.price,
      });
      expect(order.json.total).toBe(TEE.price + 500 + 206);
      expect(await page.getByRole('status').textContent()).toContain(`Order ${reference} is paid.`);
      expect(await page.getByTestId('total').textContent()).toBe('$32.06');
      expect(await page.getByTestId('confirmed-by').textContent()).toContain(`GET /orders/${orderId}`);
      await tab.shot('demo-store-confirmation');

      // The store received and verified ORDER_SUCCEEDED, and the cart is empty now.
      const row = await until(async () => {
        const text = await ordersPageRow(reference);
        return text.includes('ORDER_SUCCEEDED') && text;
      });
      expect(row).toContain('PAID');
      await page.goto(`${store.url}/cart`);
      await page.getByText('Your cart is empty.').waitFor();
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('the email field: an unknown email leaves the guest form, the test shopper gets the code step', async () => {
    const tab = await checkoutWithTee('/checkout');
    const { page, checkout } = tab;
    try {
      const email = page.getByLabel('Email');
      await email.fill(`nobody.${Date.now()}@example.com`);
      await email.blur();
      await page.getByText('No wallet for this email: carry on as a guest below.').waitFor();
      expect(await page.locator(CHECKOUT_FRAME).count()).toBe(0);
      expect(await page.getByLabel('Full name').isVisible()).toBe(true);

      await email.fill(EMAIL);
      await email.blur();
      await checkout.getByLabel('One-time code').waitFor();
      expect(await checkout.getByLabel('Email').count()).toBe(0);
      await page.getByText('You have a wallet: finish in the window that opened.').waitFor();
      await checkout.getByRole('button', { name: 'Close' }).click();
      await page.getByText('Checkout closed: your cart is still here.').waitFor();
      expect(await page.locator('#guest-status').textContent()).toBe('');
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('the own-processor flow: credentials by webhook, the store authorizes and reports, then confirms', async () => {
    const tab = await checkoutWithTee('/checkout/own-processor');
    const { page } = tab;
    try {
      const checkout = await openWallet(page);
      await signIn(checkout);
      await chooseCard(checkout, '1111');
      await ship(checkout);
      // Merchant authorization mode: the last button hands the selection over instead of paying.
      await checkout.getByRole('heading', { name: 'Review and pay' }).waitFor();
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await page.waitForURL(/\/orders\/DS-[0-9A-F]+\/confirmation$/);
      await page.getByRole('heading', { name: 'Thank you!' }).waitFor();
      const reference = referenceOf(page);
      expect(await page.getByTestId('total').textContent()).toBe('$32.06');
      expect(await page.getByTestId('confirmed-by').textContent()).toContain(
        'reported with POST /payments/externalresponse',
      );
      // Card data never reaches the browser.
      expect(await page.content()).not.toContain('4111111111111111');

      const request = await until(async () => {
        const found = await service.call(
          'GET',
          `/payments/credentials?merchantReference=${encodeURIComponent(reference)}`,
          { apiKey: ownProcessor.apiKey },
        );
        const [first] = found.json.data;
        return first?.state === 'DELIVERED' && first;
      });
      expect(request).toMatchObject({ merchantReference: reference, amount: 3206, currency: 'USD' });
      expect(request.externalResponses).toEqual([
        expect.objectContaining({ pspHostName: 'sandbox-gateway', amount: 3206, currency: 'USD' }),
      ]);
      expect(await ordersPageRow(reference)).toContain('PAYMENT_CREDENTIALS');
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('a declined card (ending 0002) lands on the failure page with the SDK error 995', async () => {
    const tab = await checkoutWithTee('/checkout');
    const { page } = tab;
    try {
      const checkout = await openWallet(page);
      await payWithCard(checkout, '0002');
      await page.waitForURL(/\/failure\?/);
      await page.getByRole('heading', { name: 'Payment failed' }).waitFor();
      expect(await page.getByTestId('error-code').textContent()).toBe('995');
      expect(await page.getByTestId('error-message').textContent()).toBe('Unable to process card');
      expect(await ordersPageRow(referenceOf(page))).toContain('FAILED');
      // The cart is kept for another try.
      await page.goto(`${store.url}/cart`);
      await page.getByRole('link', { name: 'Checkout', exact: true }).waitFor();
    } finally {
      await tab.close();
    }
  }, 60_000);
});

describe('the demo store webhook receiver', () => {
  const closers: Array<() => Promise<void>> = [];
  let store: DemoStore;
  const secret = `whsec_${Buffer.from('demo-store-webhook-secret-32-bytes!').toString('base64')}`;

  beforeAll(async () => {
    const merchant = { merchantId: 'mch_test', apiKey: 'sk_test_unused', webhookSecret: secret };
    store = await startDemoStore({
      host: '127.0.0.1',
      port: 0,
      serviceUrl: 'http://127.0.0.1:9',
      sandboxGatewayUrl: 'http://127.0.0.1:9',
      merchants: { wallet: merchant, ownProcessor: merchant },
    });
    closers.push(() => store.close());
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });

  /** An order awaiting payment, made as a browser would: a cart cookie, then checkout. */
  async function awaitingOrder(): Promise<string> {
    const added = await fetch(`${store.url}/cart`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `sku=${TEE.sku}&quantity=1`,
      redirect: 'manual',
    });
    const cookie = (added.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const started = await fetch(`${store.url}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ flow: 'wallet' }),
    });
    expect(started.status).toBe(201);
    return ((await started.json()) as { reference: string }).reference;
  }

  function orderSucceeded(reference: string): string {
    return JSON.stringify({
      eventName: 'ORDER_SUCCEEDED',
      merchantId: 'mch_test',
      orderId: 'ord_forged',
      merchantOrderId: reference,
      status: 'SUCCEEDED',
      currency: 'USD',
      subtotal: TEE.price,
      total: TEE.price,
      shipping: null,
      taxes: 0,
      transactionDetails: { gatewayTransactionId: 'gtx_1', networkTransactionId: null },
      error: null,
    });
  }

  function post(body: string, headers: Record<string, string>): Promise<Response> {
    return fetch(`${store.url}/webhooks/wallet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  }

  it('refuses a forged webhook with 401 and records nothing; the correctly signed one is recorded', async () => {
    const reference = await awaitingOrder();
    const body = orderSucceeded(reference);
    const timestamp = new Date();
    const forger = new Webhook(
      `whsec_${Buffer.from('not-the-merchant-secret-32-bytes!!').toString('base64')}`,
    );
    const forged = await post(body, {
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': forger.sign('msg_forged', timestamp, body),
    });
    expect(forged.status).toBe(401);
    const unsigned = await post(body, { 'webhook-id': 'msg_unsigned' });
    expect(unsigned.status).toBe(401);
    const orders = await (await fetch(`${store.url}/orders`)).text();
    expect(orders).not.toContain('ORDER_SUCCEEDED');
    expect(orders).toContain('AWAITING_PAYMENT');

    const genuine = await post(body, {
      'webhook-id': 'msg_genuine',
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('msg_genuine', timestamp, body),
    });
    expect(genuine.status).toBe(204);
    const after = await (await fetch(`${store.url}/orders`)).text();
    expect(after).toContain('ORDER_SUCCEEDED');
    expect(after).toContain('PAID');
  });
});
