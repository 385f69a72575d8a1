/**
 * The `merchant` authorization mode end to end: in real Chromium the shopper picks the Visa ending in
 * 1111 and presses "Continue" (there is no "Pay" button); the SDK closes the modal and hands the page the
 * selection through `onPaymentSelected` only. Then, as the merchant's server over real HTTP: the
 * credentials request, the signed PAYMENT_CREDENTIALS webhook at a real receiver (verified with
 * `standardwebhooks`), an authorization at the sandbox gateway with the network token and its
 * cryptogram, and the processor's raw answer reported back; the order shows it.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentCredentialsPayload } from '../../packages/server/src/payments/types.js';
import { addTestShopperCard } from '../../packages/server/src/test-support/cards.js';
import { type Receiver, startReceiver } from '../../packages/server/src/test-support/receiver.js';
import { until } from '../../packages/server/src/test-support/wait.js';
import {
  chooseCard,
  EMAIL,
  GROUND,
  type Harness,
  openTab,
  pressWalletButton,
  recordedCalls,
  ship,
  signIn,
  startHarness,
} from './support.js';

/** Interface section 2.8, with `zip` (the webhook's address says `zipCode`). */
const ADDRESS_KEYS = [
  'address1',
  'address2',
  'city',
  'company',
  'country',
  'externalId',
  'firstName',
  'isDefaultBilling',
  'isDefaultShipping',
  'lastName',
  'phoneNumber',
  'state',
  'zip',
];
const SUBTOTAL = 3700;
/** 8.25 % of $37.00 in Texas is 305.25 ¢, rounded half up to the cent. */
const TAXES = 305;
const CHARGED = SUBTOTAL + GROUND.price + TAXES;

interface Selection {
  orderId: string;
  sessionId: string;
  paymentId: string;
  billingInfo: Record<string, unknown>;
  shippingInfo: Record<string, unknown>;
  shippingMethod: unknown;
  taxes: number;
}

describe('the merchant authorization mode in real Chromium', () => {
  let receiver: Receiver | undefined;
  let harness: Harness | undefined;

  beforeAll(async () => {
    receiver = await startReceiver();
    harness = await startHarness({
      authorizationMode: 'merchant',
      credentialTypes: ['NETWORK_TOKEN', 'PAN'],
      webhookUrl: receiver.url,
    });
  });

  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
  });

  it('"Continue" hands the selection to onPaymentSelected; the merchant charges it through the credentials flow', async () => {
    if (!harness || !receiver) throw new Error('setup did not finish');
    const { service, merchant, shop, gatewayUrl } = harness;
    const tab = await openTab(harness.browser);
    const { page, checkout, consoleErrors } = tab;
    // The card's id as the service knows it, through the merchant API rather than the page.
    const sandbox = await service.session(merchant.apiKey);
    const visa = sandbox.paymentMethods.find((method) => method.last4CardNumber === '1111');
    if (!visa) throw new Error('the test shopper has no card ending in 1111');

    let selection: Selection;
    try {
      await page.goto(shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      // A card added here is charged by the merchant's own processor: no security code is asked.
      await checkout.getByRole('button', { name: 'Add a card' }).click();
      await checkout.getByLabel('Card number').waitFor();
      expect(await checkout.getByLabel('Security code (CVV)').count()).toBe(0);
      await checkout.getByRole('button', { name: 'Choose a saved card' }).click();
      await chooseCard(checkout, '1111');
      await ship(checkout);

      const proceed = checkout.getByRole('button', { name: 'Continue' });
      await proceed.waitFor();
      await checkout.getByText('Test Shop will complete the payment with the card you chose.').waitFor();
      // The summary's only submit is "Continue": nothing in the checkout offers to pay.
      const submit = checkout.locator('form button[type="submit"]');
      expect(await submit.count()).toBe(1);
      expect(await submit.textContent()).toBe('Continue');
      expect(await checkout.getByRole('button', { name: /^Pay\b/ }).count()).toBe(0);
      await tab.shot('merchant-mode-01-continue');

      const paid = page.waitForRequest((request) => request.url().endsWith(`/orders/${orderId}/pay`));
      await proceed.click();
      expect((await paid).postDataJSON()).toEqual({
        paymentId: visa.paymentId,
        shippingAddressId: expect.any(Number),
        shippingMethodId: GROUND.externalId,
        total: expect.any(Number),
      });
      await page.waitForFunction('window.calls.onPaymentSelected.length === 1');
      // The SDK ends the checkout as it does after a payment: the modal is gone, focus back on the button.
      await page.locator('iframe[title="Wallet checkout"]').waitFor({ state: 'detached' });
      await expect
        .poll(() => page.evaluate('document.activeElement?.shadowRoot?.activeElement?.textContent'))
        .toBe('Pay with Wallet');
      await tab.shot('merchant-mode-02-selected');

      const calls = await recordedCalls(page);
      expect(calls.success).toEqual([]);
      expect(calls.error).toEqual([]);
      expect(calls.onClose).toEqual([]);
      expect(calls.onPaymentSelected).toHaveLength(1);
      const args = calls.onPaymentSelected[0] as unknown[];
      expect(args).toHaveLength(1);
      selection = args[0] as Selection;
      expect(selection).toEqual({
        orderId,
        sessionId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        paymentId: visa.paymentId,
        billingInfo: expect.any(Object),
        shippingInfo: expect.any(Object),
        shippingMethod: GROUND,
        taxes: TAXES,
      });
      for (const address of [selection.billingInfo, selection.shippingInfo]) {
        expect(Object.keys(address).sort()).toEqual(ADDRESS_KEYS);
        expect(address).toMatchObject({ zip: expect.stringMatching(/^\d{5}/), state: 'TX' });
      }
      expect(consoleErrors).toEqual([]);
    } finally {
      await tab.close();
    }

    const { orderId, sessionId, paymentId } = selection;
    const asMerchant = { apiKey: merchant.apiKey };
    const order = async () => (await service.call('GET', `/orders/${orderId}`, asMerchant)).json;
    // Selected, not paid: out of the expiry sweep until the merchant's processor decides.
    expect(await order()).toMatchObject({ status: 'PROCESSING', total: CHARGED, transactionDetails: null });

    const requested = await service.call('POST', '/payments/credentials', {
      ...asMerchant,
      headers: { 'idempotency-key': `credentials-${orderId}` },
      body: { paymentId, sessionId, amount: CHARGED, merchantReference: 'shop-1001', currency: 'USD' },
    });
    expect(requested.status).toBe(200);
    expect(requested.json).toEqual({ code: 200, message: 'OK', requestId: expect.any(String) });

    const delivery = await receiver.nth(1);
    const payload = new Webhook(merchant.webhookSecret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    }) as PaymentCredentialsPayload;
    expect(payload).toMatchObject({
      eventName: 'PAYMENT_CREDENTIALS',
      paymentId,
      merchantId: merchant.merchantId,
      merchantReference: 'shop-1001',
      cardDetails: { networkType: 'visa' },
      billingAddress: {
        firstName: selection.billingInfo.firstName,
        address1: selection.billingInfo.address1,
        zipCode: selection.billingInfo.zip,
      },
    });
    const token = payload.credentials.find((entry) => entry.type === 'NETWORK_TOKEN');
    const pan = payload.credentials.find((entry) => entry.type === 'PAN');
    if (token?.type !== 'NETWORK_TOKEN' || pan?.type !== 'PAN') {
      throw new Error(`expected a network token and a PAN, got ${payload.credentials.map((c) => c.type)}`);
    }
    expect(pan.pan.slice(-4)).toBe('1111');
    expect(token.token.slice(-4)).toBe('1111');
    expect(token.token).not.toBe(pan.pan);
    expect(token.cvv).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(token.expirationMonth).toMatch(/^\d{2}$/);
    expect(token.expirationYear).toMatch(/^\d{4}$/);

    // The merchant's own processor: the sandbox gateway, with the network token and its cryptogram.
    const { billingAddress: billing } = payload;
    const authorization = await fetch(`${gatewayUrl}/v1/authorizations`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk_merchant_own_processor',
        'content-type': 'application/json',
        'idempotency-key': `authorize-${orderId}`,
      },
      body: JSON.stringify({
        amount: CHARGED,
        currency: 'USD',
        reference: 'shop-1001',
        source: {
          type: 'network_token',
          token: token.token,
          cryptogram: token.cvv,
          expMonth: Number(token.expirationMonth),
          expYear: Number(token.expirationYear),
        },
        billingAddress: {
          firstName: billing.firstName,
          lastName: billing.lastName,
          line1: billing.address1,
          city: billing.city,
          state: billing.state,
          postalCode: billing.zipCode,
          country: billing.country,
          phone: billing.phoneNumber,
        },
      }),
    });
    const rawResponse = await authorization.text();
    expect(authorization.status).toBe(201);
    expect(JSON.parse(rawResponse)).toMatchObject({
      status: 'AUTHORIZED',
      amount: CHARGED,
      response: { code: '00' },
      paymentMethod: { type: 'network_token', last4: '1111' },
    });

    const reported = await service.call('POST', '/payments/externalresponse', {
      ...asMerchant,
      headers: { 'idempotency-key': `external-${orderId}` },
      body: {
        paymentId,
        pspRawResponse: rawResponse,
        amount: CHARGED,
        pspHostName: 'sandbox-gateway',
        currency: 'USD',
        isRecurring: false,
      },
    });
    expect(reported.status).toBe(200);
    expect(reported.json).toEqual({
      code: 200,
      message: 'OK',
      externalResponseId: expect.stringMatching(/^ext_/),
      requestId: requested.json.requestId,
    });

    const request = await until(async () => {
      const answer = await service.call(
        'GET',
        `/payments/credentials/${requested.json.requestId}`,
        asMerchant,
      );
      return answer.json.state === 'DELIVERED' && answer.json;
    });
    expect(request).toMatchObject({
      paymentId,
      sessionId,
      amount: CHARGED,
      merchantReference: 'shop-1001',
      externalResponses: [
        { pspHostName: 'sandbox-gateway', amount: CHARGED, currency: 'USD', isRecurring: false },
      ],
    });

    const final = await order();
    expect(final).toMatchObject({
      orderId,
      merchantOrderId: 'shop-1001',
      status: 'PROCESSING',
      subtotal: SUBTOTAL,
      total: CHARGED,
      taxes: TAXES,
      email: EMAIL,
      shipping: { addressId: selection.shippingInfo.externalId, method: GROUND, amount: GROUND.price },
      transactionDetails: null,
      error: null,
      merchantAuthorization: {
        sessionId,
        paymentId,
        externalResponse: {
          externalResponseId: request.externalResponses[0].id,
          pspHostName: 'sandbox-gateway',
          amount: CHARGED,
          currency: 'USD',
          isRecurring: false,
          reportedAt: expect.any(String),
        },
      },
    });
    // The processor's raw answer stays with the credentials flow, encrypted; the order has a summary.
    expect(JSON.stringify(final)).not.toContain(token.token);
    expect(JSON.stringify(final)).not.toContain(JSON.parse(rawResponse).id);
    // The only webhook was the credentials: the service decided no outcome of its own.
    expect(receiver.received).toHaveLength(1);
  }, 90_000);

  it('asks no security code even for a card that needs one: the merchant gets a cryptogram instead', async () => {
    if (!harness) throw new Error('setup did not finish');
    const card = await addTestShopperCard(harness.service.services.wallet, '5105105105105100', true);
    const tab = await openTab(harness.browser);
    const { page, checkout } = tab;
    try {
      await page.goto(harness.shop.url);
      const orderId = await pressWalletButton(page);
      await signIn(checkout);
      await chooseCard(checkout, '5100');
      await ship(checkout);
      const proceed = checkout.getByRole('button', { name: 'Continue' });
      await proceed.waitFor();
      expect(await checkout.getByLabel(/security code/i).count()).toBe(0);
      const paid = page.waitForRequest((request) => request.url().endsWith(`/orders/${orderId}/pay`));
      await proceed.click();
      expect((await paid).postDataJSON()).not.toHaveProperty('cvv');
      await page.waitForFunction('window.calls.onPaymentSelected.length === 1');
      const calls = await recordedCalls(page);
      expect(calls.onPaymentSelected[0]).toEqual([expect.objectContaining({ orderId, paymentId: card.id })]);
      expect([calls.success, calls.error, calls.onClose]).toEqual([[], [], []]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
