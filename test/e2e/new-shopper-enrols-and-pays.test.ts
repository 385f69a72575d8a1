/**
 * End to end in real Chromium: a shopper with no wallet (a fresh email per run) presses "Pay with Wallet",
 * fills the enrolment form (name, phone, card, expiry, CVV, billing address), reads the one-time code from
 * the staging mailbox (`GET /sandbox/messages`), and pays with the new card through the sandbox gateway:
 * the CVV typed at enrolment goes with the payment. Screenshots to docs/screenshots/new-shopper-*.png.
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

describe('a new shopper enrols and pays in real Chromium', () => {
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

  it('from the button through enrolment and the emailed code to success(...) with the new card', async () => {
    if (!browser || !shop || !service) throw new Error('setup did not finish');
    const serviceUrl = service.url;
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const email = `new.shopper+${Date.now()}.${Math.random().toString(36).slice(2, 8)}@example.com`;
    const context = await browser.newContext({ viewport: { width: 1024, height: 900 } });
    const page: Page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
    const requests: Array<{ url: string; body: unknown }> = [];
    page.on('request', (request) => {
      if (request.url().includes('/checkout/api/') && request.method() === 'POST') {
        const data = request.postData();
        requests.push({ url: request.url(), body: data ? JSON.parse(data) : null });
      }
    });
    const shot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}new-shopper-${name}.png` });

    try {
      await page.goto(shop.url);
      const button = page.getByRole('button', { name: 'Pay with Wallet' });
      await button.waitFor();
      await button.click();
      await page.waitForFunction('window.calls.getOrderId.length === 1');
      const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
      expect(orderId).toMatch(/^ord_/);

      const checkout: FrameLocator = page.frameLocator('iframe[title="Wallet checkout"]');
      const emailField = checkout.getByLabel('Email');
      await emailField.waitFor();
      await emailField.fill(email);
      await shot('01-email');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      // The server answers { status: 'enrol' }: the enrolment form.
      await checkout.getByRole('heading', { name: 'Create your wallet' }).waitFor();
      await checkout.getByLabel('First name').fill('Nova');
      await checkout.getByLabel('Last name').fill('Shopper');
      await checkout.getByLabel('Card number').fill('4242424242424242');
      await checkout.getByLabel('Expiry (MM/YY)').fill('12/30');
      await checkout.getByLabel('Security code (CVV)').fill('123');
      await checkout.getByLabel('Street address').fill('500 Congress Ave');
      await checkout.getByLabel('City').fill('Austin');
      await checkout.getByLabel('State').fill('TX');
      await checkout.getByLabel('ZIP code').fill('78701');
      await checkout.getByLabel('Phone').fill('+1 512 555 0100');
      await shot('02-enrol');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const code = checkout.getByLabel('One-time code');
      await code.waitFor();
      const enrolCall = requests.find((r) => r.url.endsWith(`/orders/${orderId}/enrol`));
      expect(enrolCall?.body).toEqual({
        email,
        firstName: 'Nova',
        lastName: 'Shopper',
        phone: '+15125550100',
        card: { number: '4242424242424242', expMonth: 12, expYear: 2030, cvv: '123' },
        billingAddress: {
          company: null,
          address1: '500 Congress Ave',
          address2: null,
          city: 'Austin',
          state: 'TX',
          zip: '78701',
          country: 'US',
        },
      });

      // Staging keeps the message it would have e-mailed: the code is in its text.
      const inbox = await fetch(`${serviceUrl}/sandbox/messages?to=${encodeURIComponent(email)}`);
      expect(inbox.status).toBe(200);
      const { data } = (await inbox.json()) as { data: Array<{ to: string; text: string }> };
      const oneTimeCode = /\b(\d{6})\b/.exec(data[0]?.text ?? '')?.[1];
      expect(oneTimeCode).toMatch(/^\d{6}$/);
      await code.fill(oneTimeCode as string);
      await shot('03-one-time-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      // verify created the wallet; its one card is chosen, on to where it ships.
      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      await checkout.getByRole('radio').first().waitFor({ state: 'attached' });
      await shot('04-shipping-address');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      await shot('05-shipping-method');
      await checkout.getByRole('button', { name: 'Continue' }).click();

      const pay = checkout.getByRole('button', { name: /^Pay \$/ });
      await pay.waitFor();
      await shot('06-summary');
      await pay.click();

      await page.waitForFunction('window.calls.success.length + window.calls.error.length > 0');
      const calls = (await page.evaluate('window.calls')) as Record<string, unknown[][]>;
      expect(calls.error).toEqual([]);
      expect(calls.onClose).toEqual([]);
      expect(calls.success).toHaveLength(1);
      const args = calls.success?.[0] as unknown[];
      expect(args).toHaveLength(7);
      const [paidOrderId, customerInfo, shippingInfo, billingInfo, shippingMethod, taxes] = args as [
        string,
        Record<string, unknown>,
        unknown,
        unknown,
        unknown,
        unknown,
      ];
      expect(paidOrderId).toBe(orderId);
      expect(customerInfo).toMatchObject({
        email,
        paymentMethod: {
          last4CardNumber: '4242',
          cardBrand: expect.stringMatching(/visa/i),
          expMonth: 12,
          expYear: 2030,
          paymentToken: expect.stringMatching(/^ptk_/),
          address: expect.objectContaining({ address1: '500 Congress Ave', zip: '78701' }),
        },
      });
      expect(shippingInfo).toMatchObject({ address1: '500 Congress Ave', state: 'TX' });
      expect(billingInfo).toMatchObject({ address1: '500 Congress Ave', zip: '78701' });
      expect(shippingMethod).toEqual(GROUND);
      // 8.25 % of $37.00 in Texas.
      expect(taxes).toBe(305);

      // The CVV typed at enrolment went with the payment, and only there after the enrolment.
      const payCall = requests.find((r) => r.url.endsWith(`/orders/${orderId}/pay`));
      expect(payCall?.body).toMatchObject({ cvv: '123' });

      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await shot('07-paid');

      const order = await service.call('GET', `/orders/${orderId}`, { apiKey: merchant.apiKey });
      expect(order.json).toMatchObject({ orderId, status: 'SUCCEEDED' });
      expect(consoleErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);
});
