/**
 * End to end in real Chromium: the test shopper ticks "Remember me on this device" with its code and
 * pays; the next checkout in the same browser opens on the wallet with no code asked, signs in again by
 * itself when its sign-in times out, and pays; "Not you? Sign out" forgets the device, so the checkout
 * after that asks for the email again. Then, signed in by a remembered device, the shopper can ship to a
 * new address, and delete the wallet, only after a one-time code; the link in the e-mail about a
 * remembered device forgets it. Screenshots to docs/screenshots/remember-device-01-code.png,
 * remember-device-02-delete-code.png, remember-device-03-address-code.png and
 * remember-device-04-forget.png. The shop is on another site than the service, as a real shop is, so the
 * checkout keeps its device token in a partitioned cookie (Chromium gives a frame of another site no
 * storage); a shop on the service's site has it kept in the checkout's storage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../packages/server/src/audit/index.js';
import { TEST_SHOPPER_EMAIL } from '../../packages/server/src/sandbox/seed.js';
import {
  chooseCard,
  EMAIL,
  type Harness,
  openTab,
  pressWalletButton,
  SCREENSHOTS,
  shipAndPay,
  signInsOf,
  startHarness,
  type Tab,
  TEST_CODE,
  testShopper,
  waitForSuccess,
} from './support.js';

/** On the shop's page: the wallet button, the test shopper's email and code, the box left for the caller. */
async function typeCode(page: Tab['page'], checkout: Tab['checkout']) {
  await pressWalletButton(page);
  await checkout.getByLabel('Email').fill(EMAIL);
  await checkout.getByRole('button', { name: 'Continue' }).click();
  await checkout.getByLabel('One-time code').fill(TEST_CODE);
  return checkout.getByLabel('Remember me on this device for 30 days');
}

/**
 * The test shopper signs in with the code and is remembered; then the shop's page again and its wallet
 * button, which opens on the wallet with no code. Answers that checkout's order id.
 */
async function rememberAndReopen(shopUrl: string, { page, checkout }: Tab): Promise<string> {
  await page.goto(shopUrl);
  await (await typeCode(page, checkout)).check();
  await checkout.getByRole('button', { name: 'Verify' }).click();
  await checkout.getByText(`Signed in as ${TEST_SHOPPER_EMAIL}.`).waitFor();
  await page.goto(shopUrl);
  const orderId = await pressWalletButton(page);
  await checkout.getByText(`Signed in as ${TEST_SHOPPER_EMAIL}.`).waitFor();
  return orderId;
}

/**
 * Where the open checkout keeps the shop's device token: what its `localStorage` holds under the shop's
 * key (or the name of the error the browser refuses it with), and the browser's cookies of that name.
 */
async function deviceKept(tab: Tab, serviceUrl: string, merchantId: string) {
  const key = `wallet-checkout.device.${merchantId}`;
  const frame = tab.page.frames().find((frame) => frame.url().startsWith(`${serviceUrl}/checkout/`));
  if (!frame) throw new Error('no checkout is open');
  const storage = (await frame.evaluate(
    `(() => { try { return localStorage.getItem(${JSON.stringify(key)}); } catch (error) { return error.name; } })()`,
  )) as string | null;
  const cookies = (await tab.context.cookies()).filter((cookie) => cookie.name === key);
  return { storage, cookies };
}

/** The shop's page again and its wallet button: the checkout asks for the email, signed in as no one. */
async function expectNoSignIn(shopUrl: string, { page, checkout }: Tab): Promise<void> {
  await page.goto(shopUrl);
  await pressWalletButton(page);
  await checkout.getByLabel('Email').waitFor();
  expect(await checkout.getByText('Signed in as').count()).toBe(0);
}

describe('a shopper is remembered on this device in real Chromium', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('asks no code on the next checkout once remembered, until "Not you? Sign out"', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const remembered = () => signInsOf(service, 'remembered_devices', shopper.id);

    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    const codeRequests: string[] = [];
    page.on('request', (request) => {
      if (/\/otp(\/verify)?$/.test(request.url())) codeRequests.push(request.url());
    });
    try {
      await page.goto(shop.url);
      const remember = await typeCode(page, checkout);
      expect(await remember.isChecked()).toBe(false);
      await remember.check();
      await tab.shot('remember-device-01-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();
      await chooseCard(checkout, '1111');
      await shipAndPay(checkout);
      await waitForSuccess(page);
      expect(await remembered()).toBe(1);
      expect(codeRequests).toHaveLength(2);

      // The next checkout on this browser: the wallet at once, no email and no code.
      await page.goto(shop.url);
      const secondOrder = await pressWalletButton(page);
      await checkout.getByText(`Signed in as ${TEST_SHOPPER_EMAIL}.`).waitFor();
      expect(codeRequests).toHaveLength(2);
      // Framed by another site, the checkout gets no storage from Chromium: its partitioned cookie keeps
      // the token, until the device's expiry.
      const { merchantId } = harness.merchant;
      const kept = await deviceKept(tab, service.url, merchantId);
      expect(kept.storage).toBe('SecurityError');
      expect(kept.cookies).toEqual([
        expect.objectContaining({
          path: '/checkout/',
          secure: true,
          sameSite: 'None',
          partitionKey: 'http://localhost',
        }),
      ]);
      const [device] = await service.services.db.kysely
        .selectFrom('remembered_devices')
        .select('expires_at')
        .where('shopper_id', '=', shopper.id)
        .execute();
      expect(kept.cookies[0]?.expires).toBe(Math.floor(Number(device?.expires_at) / 1000));
      // The sign-in times out on the way: the remembered device signs the shopper in again.
      await service.services.db.kysely
        .updateTable('shopper_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('shopper_id', '=', shopper.id)
        .execute();
      await checkout.getByRole('button', { name: 'Edit this card' }).click();
      await checkout.getByLabel('Nickname (optional)').fill('Daily');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await checkout.getByRole('alert').getByText('Your sign-in had timed out').waitFor();
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await checkout.getByRole('heading', { name: 'Shipping address' }).waitFor();
      expect(codeRequests).toHaveLength(2);
      await shipAndPay(checkout);
      const [paid] = (await waitForSuccess(page)) as [string];
      expect(paid).toBe(secondOrder);

      // "Not you?" forgets the device here and on the server: the next checkout asks for the email.
      await page.goto(shop.url);
      await pressWalletButton(page);
      await checkout.getByRole('button', { name: 'Not you? Sign out' }).click();
      await checkout.getByLabel('Email').waitFor();
      await expect.poll(remembered).toBe(0);
      expect((await deviceKept(tab, service.url, merchantId)).cookies).toEqual([]);
      await expectNoSignIn(shop.url, tab);
      // The one error logged is the timed-out sign-in's refused request.
      expect(consoleErrors.filter((error) => !error.includes('401'))).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('ships to a new address from a remembered sign-in once a one-time code is verified, as typed', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const streets = async () =>
      (await service.services.wallet.listAddresses(shopper.id)).map((address) => address.address1);
    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { page, consoleErrors, checkout } = tab;
    try {
      // The next checkout opens on the wallet by the remembered device: a new address asks for a code.
      const orderId = await rememberAndReopen(shop.url, tab);
      await chooseCard(checkout, '1111');
      await checkout.getByRole('button', { name: 'Add a new address' }).click();
      await checkout.getByLabel('First name').fill('Test');
      await checkout.getByLabel('Last name').fill('Shopper');
      await checkout.getByLabel('Street address').fill('9 Far Rd');
      await checkout.getByLabel('City').fill('Reno');
      await checkout.getByLabel('State').fill('NV');
      await checkout.getByLabel('ZIP code').fill('89501');
      await checkout.getByRole('button', { name: 'Save and continue' }).click();
      await checkout
        .getByRole('status')
        .filter({ hasText: 'To save a new or changed address, confirm it is you' })
        .waitFor();
      expect(await streets()).not.toContain('9 Far Rd');
      // The device remembers the shopper already: not offered again.
      expect(await checkout.getByLabel('Remember me on this device for 30 days').count()).toBe(0);
      await checkout.getByLabel('One-time code').fill(TEST_CODE);
      await tab.shot('remember-device-03-address-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      // Verified: the address as typed is saved and chosen, and the checkout goes on from there.
      await checkout.getByRole('heading', { name: 'Shipping method' }).waitFor();
      expect(await streets()).toContain('9 Far Rd');
      await checkout.getByRole('button', { name: 'Continue' }).click();
      await checkout.getByRole('button', { name: /^Pay \$/ }).click();
      const [paid, , shippingInfo] = (await waitForSuccess(page)) as [string, unknown, { address1: string }];
      expect([paid, shippingInfo.address1]).toEqual([orderId, '9 Far Rd']);
      // The one error logged is the refused address (403 CODE_REQUIRED).
      expect(consoleErrors.filter((error) => !error.includes('403'))).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('forgets every device from the link in the e-mail about a remembered device', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const tab = await openTab(harness.browser, { width: 1024, height: 600 });
    const { consoleErrors } = tab;
    try {
      await rememberAndReopen(shop.url, tab);
      const { link } = await service.deviceEmail(TEST_SHOPPER_EMAIL);

      // The shopper opens the link in a browser and confirms.
      const mail = await tab.context.newPage();
      await mail.goto(`${service.url}${link.pathname}${link.search}`);
      await mail.screenshot({ path: `${SCREENSHOTS}remember-device-04-forget.png` });
      await mail.getByRole('button', { name: 'Forget every device' }).click();
      await mail.getByRole('heading', { name: 'Done: no device remembers you' }).waitFor();
      await mail.close();

      // The next checkout on the device asks for the email again.
      await expectNoSignIn(shop.url, tab);
      // The one error logged is the forgotten device refused (401 on resume).
      expect(consoleErrors.filter((error) => !error.includes('401'))).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('deletes the wallet of a remembered sign-in only after a one-time code', async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop } = harness;
    const shopper = await testShopper(service);
    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    const { consoleErrors, checkout } = tab;
    try {
      // The next checkout opens on the wallet by the remembered device: deleting asks for a code first.
      await rememberAndReopen(shop.url, tab);
      await checkout.getByRole('button', { name: 'Delete my wallet' }).click();
      await checkout.getByRole('button', { name: 'Delete wallet' }).click();
      await checkout
        .getByRole('status')
        .filter({ hasText: 'To delete your wallet, confirm it is you' })
        .waitFor();
      expect(await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL)).toMatchObject({
        id: shopper.id,
      });
      await checkout.getByLabel('One-time code').fill(TEST_CODE);
      await tab.shot('remember-device-02-delete-code');
      await checkout.getByRole('button', { name: 'Verify' }).click();

      await checkout.getByRole('button', { name: 'Delete my wallet' }).click();
      await checkout.getByRole('button', { name: 'Delete wallet' }).click();
      await checkout.getByRole('status').filter({ hasText: 'Your wallet was deleted.' }).waitFor();
      expect(await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL)).toBeUndefined();
      const [event] = await new AuditTrail(service.services.db).list({ action: 'shopper.erased' });
      expect(event).toMatchObject({ actor: `shopper:${shopper.id}`, subject: shopper.id });
      // The one error logged is the refused deletion (403 CODE_REQUIRED).
      expect(consoleErrors.filter((error) => !error.includes('403'))).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});

describe('a shopper is remembered on this device in real Chromium, the shop on the same site', () => {
  let harness: Harness | undefined;

  beforeAll(async () => {
    harness = await startHarness({}, '127.0.0.1');
  });

  afterAll(async () => {
    await harness?.close();
  });

  it("keeps the device token in the checkout's storage, and no cookie", async () => {
    if (!harness) throw new Error('setup did not finish');
    const { service, shop, merchant } = harness;
    const tab = await openTab(harness.browser, { width: 1024, height: 900 });
    try {
      await rememberAndReopen(shop.url, tab);
      const kept = await deviceKept(tab, service.url, merchant.merchantId);
      expect(kept.storage).toMatch(/^[\w-]{43}$/);
      expect(kept.cookies).toEqual([]);
      expect(tab.consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
