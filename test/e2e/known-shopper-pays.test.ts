/**
 * End to end in real Chromium: a merchant page on its own origin loads the SDK from the service, the
 * shopper presses "Pay with Wallet", signs in with the staging test shopper's one-time code, picks the
 * Visa ending in 1111 and pays through the sandbox gateway. Screenshots of every step go to
 * docs/screenshots/ for the integration guide.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo as NetAddress } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type FrameLocator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../packages/server/src/test-support/service.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const EMAIL = 'test.shopper@example.com';
const GROUND = { externalId: 'ground', name: 'Ground', price: 500 };

interface SandboxGatewayServer {
  url: string;
  close(): Promise<void>;
}
// Loaded from its source by a computed path, as the server's own tests do (packages/server/src/api/checkout/pay.test.ts).
const gatewayServerPath = fileURLToPath(
  new URL('../../packages/sandbox-gateway/src/server.js', import.meta.url),
);
const { startSandboxGateway } = (await import(gatewayServerPath)) as {
  startSandboxGateway(options: { port: number; host: string }): Promise<SandboxGatewayServer>;
};

/** The merchant's checkout page: the SDK from the service, a button, callbacks that record their arguments. */
function merchantPage(serviceUrl: string, merchantId: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test Shop</title></head>
<body>
  <h1>Test Shop</h1>
  <p>T-shirt $25.00 · Mug $12.00</p>
  <div id="wallet-button"></div>
  <script src="${serviceUrl}/sdk/wallet-sdk.js?merchantId=${encodeURIComponent(merchantId)}"></script>
  <script>
    window.calls = { getOrderId: [], success: [], error: [], onClose: [] };
    WalletSDK.Button({
      orderDetailsCallback: (actions) =>
        actions.createOrder({
          orderId: 'shop-1001',
          lineItems: [
            { SKU: 'TEE', name: 'T-shirt', amount: 2500 },
            { SKU: 'MUG', name: 'Mug', amount: 1200 },
          ],
          subtotal: 3700,
        }),
      getOrderId: (...args) => window.calls.getOrderId.push(args),
      success: (...args) => window.calls.success.push(args),
      error: (...args) => window.calls.error.push(args),
      onClose: (...args) => window.calls.onClose.push(args),
    }).render('#wallet-button');
  </script>
</body>
</html>`;
}

async function startMerchantPage(
  html: () => string,
): Promise<{ url: string; origin: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    if (request.url === '/' || request.url?.startsWith('/?')) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(html());
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as NetAddress;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a known shopper pays in real Chromium', () => {
  let gateway: SandboxGatewayServer | undefined;
  let service: TestService | undefined;
  let shop: Awaited<ReturnType<typeof startMerchantPage>> | undefined;
  let browser: Browser | undefined;
  let merchant: { merchantId: string; apiKey: string };

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) {
      throw new Error(
        `Chromium is needed for the end-to-end tests and ${CHROMIUM} is missing: apt-get install chromium`,
      );
    }
    gateway = await startSandboxGateway({ port: 0, host: '127.0.0.1' });
    service = await startTestService('sqlite', { SANDBOX_GATEWAY_URL: gateway.url });
    let html = '';
    shop = await startMerchantPage(() => html);
    merchant = await service.merchant({
      name: 'Test Shop',
      allowedOrigins: [shop.origin],
      shippingMethods: [GROUND],
      taxSettings: { ratesByState: { TX: 825 } },
    });
    html = merchantPage(service.url, merchant.merchantId);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await service?.close();
    await gateway?.close();
  });

  it('from the button to success(...) with the seven arguments, and the order SUCCEEDED', async () => {
    if (!browser || !shop || !service) throw new Error('setup did not finish');
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
    const page: Page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
    const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}known-shopper-${name}.png` });

    try {
      await page.goto(shop.url);
      const button = page.getByRole('button', { name: 'Pay with Wallet' });
      await button.waitFor();
      await shot('01-merchant-page');

      const created = page.waitForResponse(
        (response) => response.url().endsWith('/checkout/orders') && response.request().method() === 'POST',
      );
      await button.click();
      expect((await created).status()).toBe(201);
      // getOrderId runs before the checkout is loaded into the modal.
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      expect(orderId).toMatch(/^ord_/);

      const checkout: FrameLocator = page.frameLocator('iframe[title="Wallet checkout"]');
      const email = checkout.getByLabel('Email');
      await email.waitFor();
      await email.fill(EMAIL);
      await shot('02-email');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      await code.fill('123456');
      await shot('03-one-time-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      const visa = checkout.getByRole('radio', { name: /^Visa ending in 1111\b/ });
      await visa.waitFor({ state: 'attached' });
      await visa.check();
      await expect.poll(() => visa.isChecked()).toBe(true);
      await shot('04-card');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      await checkout.getByRole('radio').first().waitFor({ state: 'attached' });
      await shot('05-shipping-address');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await shot('06-shipping-method');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      // The summary's button reads "Pay $…" once the quote has arrived.
      const pay = checkout.getByRole('button', { name: /^Pay \$/ });
      await pay.waitFor();
      await shot('07-summary');
      await pay.click();

      await page.waitForFunction('window.calls.success.length + window.calls.error.length > 0');
      const calls = (await page.evaluate('window.calls')) as Record<string, unknown[][]>;
      expect(calls.error).toEqual([]);
      expect(calls.onClose).toEqual([]);
      expect(calls.success).toHaveLength(1);
      const args = calls.success?.[0] as unknown[];
      expect(args).toHaveLength(7);
      const [
        paidOrderId,
        customerInfo,
        shippingInfo,
        billingInfo,
        shippingMethod,
        taxes,
        transactionDetails,
      ] = args as [
        string,
        Record<string, unknown>,
        unknown,
        unknown,
        unknown,
        unknown,
        Record<string, unknown>,
      ];
      expect(paidOrderId).toBe(orderId);
      expect(customerInfo).toMatchObject({
        email: EMAIL,
        paymentMethod: {
          last4CardNumber: '1111',
          cardBrand: expect.any(String),
          addressId: expect.any(Number),
          expMonth: expect.any(Number),
          expYear: expect.any(Number),
          paymentToken: expect.stringMatching(/^ptk_/),
          address: expect.objectContaining({ zip: expect.any(String) }),
        },
      });
      const method = customerInfo.paymentMethod as { addressId: number; expMonth: number; expYear: number };
      expect(Number.isInteger(method.addressId)).toBe(true);
      expect(Number.isInteger(method.expMonth)).toBe(true);
      expect(Number.isInteger(method.expYear)).toBe(true);
      expect(shippingInfo).toMatchObject({ address1: expect.any(String), zip: expect.any(String) });
      expect(billingInfo).toMatchObject({ address1: expect.any(String), zip: expect.any(String) });
      expect(shippingMethod).toEqual(GROUND);
      expect(Number.isInteger(taxes)).toBe(true);
      expect(transactionDetails).toMatchObject({ gatewayTransactionId: expect.any(String) });
      expect(transactionDetails.gatewayTransactionId).not.toBe('');

      // The modal is gone.
      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await shot('08-paid');

      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: merchant.apiKey });
      expect(order.status).toBe(200);
      expect(order.json).toMatchObject({ orderId, status: 'SUCCEEDED', merchantOrderId: 'shop-1001' });
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
