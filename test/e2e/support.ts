/**
 * What the real-Chromium tests share: the service (via startTestService), the sandbox gateway, a merchant
 * page on another site than the service's, as a real shop's is, the system Chromium, and the steps a
 * shopper takes in the checkout.
 * No sleeps: every wait is on something the page shows or records.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo as NetAddress } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type FrameLocator,
  type Locator,
  type Page,
  type ViewportSize,
} from 'playwright-core';
import { expect } from 'vitest';
import type { CreateMerchantInput } from '../../packages/server/src/merchants/index.js';
import { TEST_SHOPPER_EMAIL } from '../../packages/server/src/sandbox/seed.js';
import { TEST_ACTOR } from '../../packages/server/src/test-support/actor.js';
import {
  type GatewayProxy,
  startGatewayProxy,
} from '../../packages/server/src/test-support/gateway-proxy.js';
import { startTestService, type TestService } from '../../packages/server/src/test-support/service.js';
import type { Shopper } from '../../packages/server/src/wallet/index.js';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Screenshots go to docs/screenshots/ when E2E_SCREENSHOTS=docs (to refresh the guide's pictures), else to
 * a folder in the system's temporary directory, overwritten by each run: some pages show per-run values
 * (a fresh e-mail), and a test run should not change tracked files.
 */
export const SCREENSHOTS =
  process.env.E2E_SCREENSHOTS === 'docs'
    ? fileURLToPath(new URL('../../docs/screenshots/', import.meta.url))
    : `${path.join(os.tmpdir(), 'wallet-e2e-screenshots')}/`;
/** The staging test shopper; its one-time code is always 123456. */
export const EMAIL = 'test.shopper@example.com';
export const TEST_CODE = '123456';
export const GROUND = { externalId: 'ground', name: 'Ground', price: 500 };
export const CHECKOUT_FRAME = 'iframe[title="Wallet checkout"]';

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

/** The standard order: $37.00 of two items, the merchant's own id `shop-1001`. */
const STANDARD_ORDER = `(actions) =>
        actions.createOrder({
          orderId: 'shop-1001',
          lineItems: [
            { SKU: 'TEE', name: 'T-shirt', amount: 2500 },
            { SKU: 'MUG', name: 'Mug', amount: 1200 },
          ],
          subtotal: 3700,
        })`;

/** The callbacks a page records in `window.calls`, each as the arguments of every call. */
export const RECORDED_CALLBACKS = ['getOrderId', 'success', 'error', 'onClose', 'onPaymentSelected'] as const;
export type RecordedCallback = (typeof RECORDED_CALLBACKS)[number];

/**
 * The source of a `WalletSDK.Button` options object: the standard order, every callback recording its
 * arguments in `window.calls`, and `overrides` (a property name → the JS source of its value) replacing
 * those properties or adding others. A test states only what differs:
 * `buttonOptions({ success: 'function (orderId) { … }' })`.
 */
export function buttonOptions(overrides: Record<string, string> = {}): string {
  const properties: Record<string, string> = { orderDetailsCallback: STANDARD_ORDER };
  for (const name of RECORDED_CALLBACKS) {
    properties[name] = `(...args) => window.calls.${name}.push(args)`;
  }
  Object.assign(properties, overrides);
  const lines = Object.entries(properties).map(([name, value]) => `      ${name}: ${value},`);
  return `{\n${lines.join('\n')}\n    }`;
}

/** The standard `WalletSDK.Button` options: an order of $37.00 and callbacks that record their arguments. */
export const RECORDING_OPTIONS = buttonOptions();

/**
 * The merchant's checkout page: the SDK from the service, a button, callbacks that record their arguments
 * in `window.calls`. `options` replaces the Button options (a JS object literal), `before` runs first.
 * The button object is kept in `window.walletButton`. `pinned` loads the SDK from a fixed URL with a
 * Subresource Integrity hash instead of the current one; `bundle` runs a script of the page's own instead.
 */
export function merchantPage(
  serviceUrl: string,
  merchantId: string,
  page: {
    options?: string;
    before?: string;
    body?: string;
    pinned?: { src: string; integrity: string };
    /** A script run in place of the service's SDK, such as a merchant's bundle that defines `WalletSDK`. */
    bundle?: string;
  } = {},
): string {
  const sdk = page.bundle
    ? `<script>${page.bundle}</script>`
    : page.pinned
      ? `<script src="${page.pinned.src}" integrity="${page.pinned.integrity}" crossorigin="anonymous" data-merchant-id="${merchantId}"></script>`
      : `<script src="${serviceUrl}/sdk/wallet-sdk.js?merchantId=${encodeURIComponent(merchantId)}"></script>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Test Shop</title></head>
<body>
  <h1>Test Shop</h1>
  <p>T-shirt $25.00 · Mug $12.00</p>
  ${page.body ?? ''}
  <div id="wallet-button"></div>
  ${sdk}
  <script>
    window.calls = ${JSON.stringify(Object.fromEntries(RECORDED_CALLBACKS.map((name) => [name, []])))};
    ${page.before ?? ''}
    window.walletButton = WalletSDK.Button(${page.options ?? RECORDING_OPTIONS}).render('#wallet-button');
  </script>
</body>
</html>`;
}

export interface MerchantSite {
  url: string;
  origin: string;
  /** Serves `html` at `path` (default `/`) and returns its URL. */
  serve(path: string, html: string): string;
  close(): Promise<void>;
}

/**
 * The shop's pages, on 127.0.0.1 like every server of a test, named by `hostname`: `localhost` (the
 * default) is another site than the service's `127.0.0.1`, so the checkout is framed cross-site, as on a
 * real shop; `127.0.0.1` is the same site.
 */
export async function startMerchantSite(
  hostname: 'localhost' | '127.0.0.1' = 'localhost',
): Promise<MerchantSite> {
  const pages = new Map<string, string>();
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] as string;
    const html = pages.get(path);
    if (html !== undefined) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(html);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as NetAddress;
  const origin = `http://${hostname}:${port}`;
  return {
    url: `${origin}/`,
    origin,
    serve(path, html) {
      pages.set(path, html);
      return `${origin}${path}`;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is needed for the end-to-end tests and ${CHROMIUM} is missing: apt-get install chromium`,
    );
  }
  return chromium.launch({
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
}

export interface Harness {
  service: TestService;
  shop: MerchantSite;
  browser: Browser;
  merchant: { merchantId: string; apiKey: string; webhookSecret: string };
  /** The sandbox gateway the service pays with; merchants in the credentials flow may authorize there too. */
  gatewayUrl: string;
  /** Serves the standard merchant page (or a variant) at `path` on the shop's origin; returns its URL. */
  page(path?: string, variant?: Parameters<typeof merchantPage>[2]): string;
  close(): Promise<void>;
}

/**
 * Makes the harness merchant pay through the sandbox gateway behind a proxy that can lose its answers
 * (test-support/gateway-proxy.ts), with the gateway time-out `timeoutMs`. The caller closes the proxy.
 */
export async function gatewayBehindProxy(
  harness: Harness,
  timeoutMs: number,
  apiKey: string,
): Promise<GatewayProxy> {
  const proxy = await startGatewayProxy(harness.gatewayUrl);
  await harness.service.services.gateways.set(
    harness.merchant.merchantId,
    { gateway: 'sandbox', style: 'json', url: proxy.url, timeoutMs },
    { apiKey },
    TEST_ACTOR,
  );
  return proxy;
}

/** An order's status as the harness merchant reads it (`GET /orders/{orderId}`). */
export async function orderStatus(harness: Harness, orderId: string): Promise<string> {
  const order = await harness.service.call('GET', `/orders/${orderId}`, { apiKey: harness.merchant.apiKey });
  return order.json.status;
}

/** The staging seed's test shopper, as the service under test holds it. */
export async function testShopper(service: TestService): Promise<Shopper> {
  const shopper = await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
  if (!shopper) throw new Error('the staging seed made no test shopper');
  return shopper;
}

/** How many rows of a sign-in table name the shopper: its live checkouts, or the devices remembering it. */
export async function signInsOf(
  service: TestService,
  table: 'shopper_tokens' | 'remembered_devices',
  shopperId: string,
): Promise<number> {
  const rows = await service.services.db.kysely
    .selectFrom(table)
    .select('shopper_id')
    .where('shopper_id', '=', shopperId)
    .execute();
  return rows.length;
}

/**
 * Starts the sandbox gateway, the service (sqlite) wired to it, a merchant site on another site (or, with
 * `shopHostname` 127.0.0.1, on the service's site), a merchant allowing that origin (Ground shipping,
 * 8.25 % tax in Texas unless `merchantInput` says otherwise), and Chromium. The standard merchant page is
 * served at `/`.
 */
export async function startHarness(
  merchantInput: Partial<CreateMerchantInput> = {},
  shopHostname?: Parameters<typeof startMerchantSite>[0],
): Promise<Harness> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer();
  };
  try {
    const gateway = await startSandboxGateway({ port: 0, host: '127.0.0.1' });
    closers.push(() => gateway.close());
    const service = await startTestService('sqlite', { SANDBOX_GATEWAY_URL: gateway.url });
    closers.push(() => service.close());
    const shop = await startMerchantSite(shopHostname);
    closers.push(() => shop.close());
    const merchant = await service.merchant({
      name: 'Test Shop',
      allowedOrigins: [shop.origin],
      shippingMethods: [GROUND],
      taxSettings: { ratesByState: { TX: 825 } },
      ...merchantInput,
    });
    const browser = await launchChromium();
    closers.push(() => browser.close());
    const page: Harness['page'] = (path = '/', variant = {}) =>
      shop.serve(path, merchantPage(service.url, merchant.merchantId, variant));
    page('/');
    return { service, shop, browser, merchant, gatewayUrl: gateway.url, page, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Console errors (text and source URL) the page and its frames logged. */
  consoleErrors: string[];
  checkout: FrameLocator;
  /** Saves a screenshot as <name>.png in SCREENSHOTS. */
  shot(name: string): Promise<Buffer>;
  close(): Promise<void>;
}

export async function openTab(
  browser: Browser,
  viewport: ViewportSize = { width: 1024, height: 800 },
): Promise<Tab> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} ${message.location().url}`);
  });
  return {
    context,
    page,
    consoleErrors,
    checkout: page.frameLocator(CHECKOUT_FRAME),
    shot: (name) => page.screenshot({ path: `${SCREENSHOTS}${name}.png` }),
    close: () => context.close(),
  };
}

/** What the merchant page's callbacks recorded. */
export type Calls = Record<RecordedCallback, unknown[][]>;
export async function recordedCalls(page: Page): Promise<Calls> {
  return (await page.evaluate('window.calls')) as Calls;
}

/** Waits for the merchant page to record success or error. */
export async function waitForOutcome(page: Page): Promise<Calls> {
  await page.waitForFunction('window.calls.success.length + window.calls.error.length > 0');
  return recordedCalls(page);
}

/** Waits for the outcome, expects it to be one `success` and nothing else, and returns its arguments. */
export async function waitForSuccess(page: Page): Promise<unknown[]> {
  const calls = await waitForOutcome(page);
  expect(calls.error).toEqual([]);
  expect(calls.onClose).toEqual([]);
  expect(calls.success).toHaveLength(1);
  const args = calls.success[0] as unknown[];
  expect(args).toHaveLength(7);
  return args;
}

/** Presses the wallet button; resolves with the orderId given to getOrderId. */
export async function pressWalletButton(page: Page): Promise<string> {
  const button = page.getByRole('button', { name: 'Pay with Wallet' });
  await button.waitFor();
  await button.click();
  await page.waitForFunction('window.calls.getOrderId.length === 1');
  const [[orderId]] = (await page.evaluate('window.calls.getOrderId')) as [[string]];
  return orderId;
}

/** Email, then the one-time code, up to the card carousel. */
export async function signIn(checkout: FrameLocator, email = EMAIL): Promise<void> {
  const field = checkout.getByLabel('Email');
  await field.waitFor();
  await field.fill(email);
  await checkout.getByRole('button', { name: 'Continue' }).click();
  await enterCode(checkout);
}

export async function enterCode(checkout: FrameLocator, code = TEST_CODE): Promise<void> {
  const field = checkout.getByLabel('One-time code');
  await field.waitFor();
  await field.fill(code);
  await checkout.getByRole('button', { name: 'Verify' }).click();
}

/** Picks the saved card ending in `last4` and continues to the shipping address. */
export async function chooseCard(checkout: FrameLocator, last4: string): Promise<void> {
  const card = checkout.getByRole('radio', { name: new RegExp(`^\\w+ ending in ${last4}\\b`) });
  await card.waitFor({ state: 'attached', timeout: 10_000 }).catch(async (error) => {
    const text = await checkout.locator('body').textContent();
    throw new Error(`no card ending in ${last4}; the checkout shows: ${text}`, { cause: error });
  });
  // The radio sits under the tile's picture: the shopper clicks the tile (its label).
  await checkout.locator('label', { has: card }).click();
  await expect.poll(() => card.isChecked()).toBe(true);
  await checkout.getByRole('button', { name: 'Continue' }).click();
}

/**
 * Chooses "A new address" as the card's billing address (in "Add a card" or "Edit this card") and types
 * it in; the names are the shopper's. Answers the group, for what the test checks in it next.
 */
export async function typeNewBillingAddress(
  checkout: FrameLocator,
  place: { address1: string; city: string; state: string; zip: string },
): Promise<Locator> {
  await checkout.getByLabel('Billing address').selectOption({ label: 'A new address' });
  const form = checkout.getByRole('group', { name: 'New billing address' });
  await form.getByLabel('Street address').fill(place.address1);
  await form.getByLabel('City').fill(place.city);
  await form.getByLabel('State').fill(place.state);
  await form.getByLabel('ZIP code').fill(place.zip);
  return form;
}

/** The steps from the shipping address on, for tests that take a screenshot of each as it shows. */
export type ShipStep = 'shipping-address' | 'shipping-method' | 'summary';
type AtStep = (step: ShipStep) => Promise<unknown>;
const noShot: AtStep = async () => undefined;

/** From the shipping address step: the default address and Ground, up to the summary. */
export async function ship(checkout: FrameLocator, atStep: AtStep = noShot): Promise<void> {
  await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
  await checkout.getByRole('radio').first().waitFor({ state: 'attached' });
  await atStep('shipping-address');
  await checkout.getByRole('button', { name: 'Continue' }).click();
  await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
  await atStep('shipping-method');
  await checkout.getByRole('button', { name: 'Continue' }).click();
}

/** From the shipping address step: the default address, Ground, then "Pay $…" once the quote is in. */
export async function shipAndPay(checkout: FrameLocator, atStep: AtStep = noShot): Promise<void> {
  await ship(checkout, atStep);
  const pay = checkout.getByRole('button', { name: /^Pay \$/ });
  await pay.waitFor();
  await atStep('summary');
  await pay.click();
}

/** The known shopper pays with the card ending in `last4`, from the open checkout's email step. */
export async function payWithCard(checkout: FrameLocator, last4 = '1111'): Promise<void> {
  await signIn(checkout);
  await chooseCard(checkout, last4);
  await shipAndPay(checkout);
}
