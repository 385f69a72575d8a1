import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visaNumber } from '../../test-support/cards.js';
import { engines } from '../../test-support/db.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../../test-support/sandbox-gateway.js';
import {
  credentialsBody,
  signInTestShopper,
  startTestService,
  type TestService,
} from '../../test-support/service.js';
import { MAX_CARDS } from '../../wallet/index.js';

const SHOP = 'https://shop.example';
const FUTURE_YEAR = new Date().getUTCFullYear() + 2;
const WALLET_CARD_KEYS = [
  'paymentId',
  'cardBrand',
  'last4CardNumber',
  'expMonth',
  'expYear',
  'fullNameCard',
  'nickName',
  'isDefault',
  'needsCvv',
  'expired',
  'billingAddressId',
].sort();

describe.each(engines())('checkout page API: a signed-in shopper adds a card on %s', (engine) => {
  let gateway: SandboxGatewayServer;
  let receiver: Receiver;
  let service: TestService;
  let merchantId: string;
  let apiKey: string;

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    receiver = await startReceiver();
    // Retries a second apart: a card is removed between a webhook's first attempt and its retry.
    service = await startTestService(engine, {
      SANDBOX_GATEWAY_URL: gateway.url,
      CREDENTIALS_RETRY_DELAYS_MS: '1000,1000',
    });
    ({ merchantId, apiKey } = await service.merchant({
      allowedOrigins: [SHOP],
      shippingMethods: [{ externalId: 'ground', name: 'Ground', price: 500 }],
    }));
  });

  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await gateway?.close();
  });

  /** A new order and the test shopper signed in to it. */
  const signIn = async () => {
    const { orderId, headers } = await signInTestShopper(service, merchantId, SHOP);
    const wallet = (await service.call('GET', '/checkout/api/wallet', { headers })).json;
    return { orderId, headers, wallet, addressId: wallet.addresses[0].addressId as number };
  };
  const addCard = (headers: Record<string, string>, body: Record<string, unknown>) =>
    service.call('POST', '/checkout/api/wallet/cards', { headers, body });

  it('saves the card (201) and pays with it, its security code going with that payment', async () => {
    const { orderId, headers, addressId } = await signIn();
    const added = await addCard(headers, {
      number: '4242 4242 4242 4242',
      expMonth: 12,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: addressId,
    });
    expect(added.status).toBe(201);
    expect(Object.keys(added.json).sort()).toEqual(WALLET_CARD_KEYS);
    expect(added.json).toMatchObject({
      cardBrand: 'visa',
      last4CardNumber: '4242',
      expMonth: 12,
      expYear: FUTURE_YEAR,
      fullNameCard: 'Taylor Shopper',
      isDefault: false,
      needsCvv: false,
      expired: false,
      billingAddressId: addressId,
    });
    expect(added.text).not.toContain('4242424242424242');
    const wallet = (await service.call('GET', '/checkout/api/wallet', { headers })).json;
    expect(wallet.cards).toContainEqual(added.json);

    const paid = await service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: {
        paymentId: added.json.paymentId,
        shippingAddressId: addressId,
        shippingMethodId: 'ground',
        cvv: '123',
      },
    });
    expect(paid.status).toBe(200);
    expect(paid.json.outcome).toBe('success');
    const order = await service.call('GET', `/orders/${orderId}`, { apiKey });
    expect(order.json).toMatchObject({ status: 'SUCCEEDED' });
    expect(service.logs.length).toBeGreaterThan(0);
    expect(service.logs.join('\n')).not.toContain('4242424242424242');
  });

  it('renews a card saved with the same number (200, the same paymentId, the later expiry)', async () => {
    const { headers, addressId } = await signIn();
    const card = {
      number: '5105105105105100',
      expMonth: 3,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: addressId,
    };
    const first = await addCard(headers, card);
    expect(first.status).toBe(201);
    const renewed = await addCard(headers, { ...card, expMonth: 9, expYear: FUTURE_YEAR + 3 });
    expect(renewed.status).toBe(200);
    expect(renewed.json).toEqual({ ...first.json, expMonth: 9, expYear: FUTURE_YEAR + 3 });
    const wallet = (await service.call('GET', '/checkout/api/wallet', { headers })).json;
    expect(
      wallet.cards.filter((entry: { last4CardNumber: string }) => entry.last4CardNumber === '5100'),
    ).toEqual([renewed.json]);
  });

  it('refuses a bad card with 400 naming the field and the rule, never echoing the number', async () => {
    const { headers, addressId } = await signIn();
    const good = {
      number: '4000056655665556',
      expMonth: 12,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: addressId,
    };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ number: '4000056655665557' }, /^number: /],
      [{ number: '12' }, /number/],
      [{ expMonth: 13 }, /expMonth/],
      [{ expYear: 2001 }, /^expMonth\/expYear: the card has expired/],
      [{ nameOnCard: '' }, /nameOnCard/],
      [{ billingAddressId: 987654 }, /^billingAddressId: /],
      [{ billingAddressId: undefined }, /billingAddressId/],
    ];
    for (const [change, message] of cases) {
      const refused = await addCard(headers, { ...good, ...change });
      expect({ change, status: refused.status, errorCode: refused.json.errorCode }).toEqual({
        change,
        status: 400,
        errorCode: 'VALIDATION_ERROR',
      });
      expect(refused.json.errorMessage).toMatch(message);
      expect(refused.text).not.toContain('400005665566555');
    }
    const wallet = (await service.call('GET', '/checkout/api/wallet', { headers })).json;
    expect(wallet.cards.map((card: { last4CardNumber: string }) => card.last4CardNumber)).not.toContain(
      '5556',
    );
  });

  it('removes a card: gone from the wallet and refused for new payments, while its acknowledged webhook is still delivered', async () => {
    const { orderId, headers, addressId } = await signIn();
    const added = await addCard(headers, {
      number: visaNumber(300),
      expMonth: 12,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: addressId,
    });
    const { paymentId } = added.json;
    // A merchant of the credentials flow with a receiver of its own: nothing else is sent there.
    const processor = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(processor.apiKey);
    const asked = { ...credentialsBody(session, { paymentId, merchantReference: 'removed-later' }) };
    receiver.respondWith(500);
    const first = receiver.nth(receiver.received.length + 1);
    const acknowledged = await service.call('POST', '/payments/credentials', {
      apiKey: processor.apiKey,
      body: asked,
    });
    expect(acknowledged.status).toBe(200);
    await first;

    const removed = await service.call('DELETE', `/checkout/api/wallet/cards/${paymentId}`, { headers });
    expect(removed.status).toBe(200);
    expect(Object.keys(removed.json).sort()).toEqual([
      'addresses',
      'cards',
      'email',
      'firstName',
      'lastName',
      'phone',
    ]);
    expect(removed.json.cards.map((card: { paymentId: string }) => card.paymentId)).not.toContain(paymentId);
    expect(removed.json.cards.filter((card: { isDefault: boolean }) => card.isDefault)).toHaveLength(1);

    // The retry, after the removal, still carries the card: the shopper asked for that payment before.
    const retried = await receiver.nth(receiver.received.length + 1);
    const body = verifiedBody<{ paymentId: string; credentials: unknown[] }>(
      processor.webhookSecret,
      retried,
    );
    expect(body.paymentId).toBe(paymentId);
    expect(body.credentials).toHaveLength(2);

    const refused = await service.call('POST', '/payments/credentials', {
      apiKey: processor.apiKey,
      body: { ...asked, merchantReference: 'after-removal' },
    });
    expect([refused.status, refused.json.errorCode]).toEqual([404, 'PAYMENT_METHOD_NOT_FOUND']);
    const paid = await service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: { paymentId, shippingAddressId: addressId, shippingMethodId: 'ground', cvv: '123' },
    });
    expect([paid.status, paid.json.errorCode]).toEqual([404, 'PAYMENT_METHOD_NOT_FOUND']);
    expect(
      (await service.session(processor.apiKey)).paymentMethods.map((method) => method.paymentId),
    ).not.toContain(paymentId);

    const again = await service.call('DELETE', `/checkout/api/wallet/cards/${paymentId}`, { headers });
    expect(again.status).toBe(200);
    const unknown = await service.call('DELETE', '/checkout/api/wallet/cards/no-such-card', { headers });
    expect([unknown.status, unknown.json.errorCode]).toEqual([404, 'PAYMENT_METHOD_NOT_FOUND']);
    const anonymous = await service.call('DELETE', `/checkout/api/wallet/cards/${paymentId}`);
    expect([anonymous.status, anonymous.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);

    const back = await addCard(headers, {
      number: visaNumber(300),
      expMonth: 12,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: addressId,
    });
    expect([back.status, back.json.paymentId]).toEqual([201, paymentId]);
  });

  it('answers 401 SHOPPER_UNAUTHORIZED without a shopper token', async () => {
    const refused = await service.call('POST', '/checkout/api/wallet/cards', {
      body: {
        number: '4242424242424242',
        expMonth: 12,
        expYear: FUTURE_YEAR,
        nameOnCard: 'A',
        billingAddressId: 1,
      },
    });
    expect(refused.status).toBe(401);
    expect(refused.json.errorCode).toBe('SHOPPER_UNAUTHORIZED');
  });

  it(`answers 409 WALLET_FULL once the wallet holds ${MAX_CARDS} cards`, async () => {
    const { headers, addressId } = await signIn();
    const save = (serial: number) =>
      addCard(headers, {
        number: visaNumber(serial),
        expMonth: 12,
        expYear: FUTURE_YEAR,
        nameOnCard: 'Taylor Shopper',
        billingAddressId: addressId,
      });
    const { wallet } = await signIn();
    for (let serial = 1; serial <= MAX_CARDS - wallet.cards.length; serial++) {
      expect((await save(serial)).status).toBe(201);
    }
    const full = await save(MAX_CARDS + 1);
    expect(full.status).toBe(409);
    expect(full.json).toEqual({
      errorCode: 'WALLET_FULL',
      errorMessage: expect.stringContaining(`${MAX_CARDS} cards`),
    });
  });
});
