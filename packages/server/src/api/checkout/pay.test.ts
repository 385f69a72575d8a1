import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditTrail } from '../../audit/index.js';
import { copyCardWideIdentifiers } from '../../db/migrations/024_stored_credentials.js';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { TEST_ACTOR } from '../../test-support/actor.js';
import { addTestShopperCard } from '../../test-support/cards.js';
import { engines } from '../../test-support/db.js';
import { type GatewayProxy, startGatewayProxy } from '../../test-support/gateway-proxy.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../../test-support/sandbox-gateway.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { until } from '../../test-support/wait.js';

const SHOP = 'https://shop.example';
const GROUND = { externalId: 'ground', name: 'Ground', price: 500 };
const ORDER = {
  lineItems: [
    { SKU: 'TEE', name: 'T-shirt', amount: 2500 },
    { SKU: 'MUG', amount: 1200 },
  ],
};
/** 1 s: a lost answer costs the test two of them; a local gateway answers in a few ms. */
const SLOW_GATEWAY_TIMEOUT_MS = 1_000;
const ADDRESS_KEYS = [
  'firstName',
  'lastName',
  'company',
  'address1',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'phoneNumber',
  'isDefaultBilling',
  'isDefaultShipping',
  'externalId',
];

describe.each(engines())('checkout page API: sign-in, wallet and payment on %s', (engine) => {
  let gateway: SandboxGatewayServer;
  let proxy: GatewayProxy;
  let receiver: Receiver;
  let service: TestService;
  let shop: string;
  let plain: string;
  let plainSecret: string;
  let plainKey: string;
  let connected: string;
  let xml: string;
  let merchantMode: { merchantId: string; apiKey: string };
  let slow: { merchantId: string; apiKey: string };

  const createOrder = async (merchantId: string, order: unknown = ORDER) => {
    const response = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order },
      headers: { origin: SHOP },
    });
    expect(response.status).toBe(201);
    return response.json.orderId as string;
  };
  const signIn = async (orderId: string) => {
    const sent = await service.call('POST', `/checkout/api/orders/${orderId}/otp`, {
      body: { email: TEST_SHOPPER_EMAIL },
    });
    expect(sent.json).toEqual({ status: 'sent', destination: expect.stringContaining('@example.com') });
    const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
      body: { email: TEST_SHOPPER_EMAIL, code: '123456' },
    });
    expect(verified.status).toBe(200);
    return verified.json.shopperToken as string;
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const walletOf = async (token: string) =>
    (await service.call('GET', '/checkout/api/wallet', { headers: bearer(token) })).json;
  const cardEnding = async (token: string, last4: string) =>
    (await walletOf(token)).cards.find((card: { last4CardNumber: string }) => card.last4CardNumber === last4);
  const pay = (orderId: string, token: string, body: Record<string, unknown>) =>
    service.call('POST', `/checkout/api/orders/${orderId}/pay`, { body, headers: bearer(token) });
  /** Signs the test shopper in to a new order of `merchantId` and pays with the card ending `last4`. */
  const payWith = async (merchantId: string, last4: string, shipping = false) => {
    const orderId = await createOrder(merchantId);
    const token = await signIn(orderId);
    const wallet = await walletOf(token);
    const card = wallet.cards.find((entry: { last4CardNumber: string }) => entry.last4CardNumber === last4);
    const response = await pay(orderId, token, {
      paymentId: card.paymentId,
      ...(shipping ? { shippingAddressId: wallet.addresses[0].addressId, shippingMethodId: 'ground' } : {}),
    });
    return { orderId, token, wallet, card, response };
  };

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    proxy = await startGatewayProxy(gateway.url);
    receiver = await startReceiver();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: proxy.url });
    const base = { allowedOrigins: [SHOP], webhookUrl: receiver.url };
    ({ merchantId: shop } = await service.merchant({
      ...base,
      name: 'Shipping Shop',
      shippingMethods: [GROUND],
      taxSettings: { ratesByState: { TX: 825 } },
    }));
    ({
      merchantId: plain,
      apiKey: plainKey,
      webhookSecret: plainSecret,
    } = await service.merchant({
      ...base,
      name: 'Digital Shop',
      taxSettings: { ratesByState: { TX: 625 } },
    }));
    ({ merchantId: connected } = await service.merchant({
      ...base,
      name: 'Connected',
      variant: 'connected',
    }));
    ({ merchantId: xml } = await service.merchant({ ...base, name: 'XML Shop' }));
    await service.services.gateways.set(
      xml,
      { gateway: 'sandbox', style: 'xml', url: proxy.url, timeoutMs: 5_000 },
      { apiKey: 'sk_sandbox_xml' },
      TEST_ACTOR,
    );
    merchantMode = await service.merchant({ ...base, name: 'Own Processor', authorizationMode: 'merchant' });
    slow = await service.merchant({ ...base, name: 'Slow Gateway Shop' });
    await service.services.gateways.set(
      slow.merchantId,
      { gateway: 'sandbox', style: 'json', url: proxy.url, timeoutMs: SLOW_GATEWAY_TIMEOUT_MS },
      { apiKey: 'sk_sandbox_slow' },
      TEST_ACTOR,
    );
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await proxy?.close();
    await gateway?.close();
  });

  it('shows the order summary to the checkout page', async () => {
    const orderId = await createOrder(shop);
    const response = await service.call('GET', `/checkout/api/orders/${orderId}`);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      orderId,
      status: 'CREATED',
      merchantName: 'Shipping Shop',
      variant: 'standard',
      authorizationMode: 'service',
      currency: 'USD',
      lineItems: ORDER.lineItems,
      subtotal: 3700,
      description: null,
      shippingMethods: [GROUND],
      expiresAt: expect.any(String),
      rememberDeviceDays: 30,
    });
    expect((await service.call('GET', '/checkout/api/orders/ord_nothing')).json.errorCode).toBe(
      'ORDER_NOT_FOUND',
    );
  });

  it('gives the wallet to a signed-in shopper: default card first, expiry flagged', async () => {
    const token = await signIn(await createOrder(shop));
    const answer = await service.call('GET', '/checkout/api/wallet', { headers: bearer(token) });
    // The shopper's email, phone and addresses: no browser or proxy cache keeps them.
    expect(answer.headers['cache-control']).toBe('no-store');
    const wallet = answer.json;
    expect(wallet.email).toBe(TEST_SHOPPER_EMAIL);
    expect(wallet.phone).toBe('+15125550100');
    expect(wallet.cards.map((card: { last4CardNumber: string }) => card.last4CardNumber)[0]).toBe('1111');
    // Other tests add cards to the same shopper: check the five seeded ones are all there, whatever the order.
    expect(wallet.cards.map((card: { last4CardNumber: string }) => card.last4CardNumber)).toEqual(
      expect.arrayContaining(['1111', '4444', '0002', '0069', '0119']),
    );
    expect(wallet.cards[0]).toMatchObject({
      cardBrand: 'visa',
      isDefault: true,
      expired: false,
      needsCvv: false,
    });
    expect(wallet.addresses[0]).toMatchObject({ addressId: expect.any(Number), state: 'TX', zip: '78701' });

    const added = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: bearer(token),
      body: {
        firstName: 'Taylor',
        lastName: 'Shopper',
        address1: '1 Main St',
        city: 'Portland',
        state: 'OR',
        zip: '97201',
        country: 'US',
      },
    });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({
      addressId: expect.any(Number),
      state: 'OR',
      isDefaultShipping: false,
    });

    expect((await service.call('GET', '/checkout/api/wallet')).json.errorCode).toBe('SHOPPER_UNAUTHORIZED');
    expect((await service.call('GET', '/checkout/api/wallet', { headers: bearer('nonsense') })).status).toBe(
      401,
    );
  });

  it('pays with 1111: the seven success arguments in exactly the interface shapes', async () => {
    const before = proxy.count();
    const { orderId, wallet, card, response } = await payWith(shop, '1111', true);
    expect(response.status).toBe(200);
    const address = wallet.addresses[0];
    const { addressId: _addressId, ...addressInfo } = address;
    const body = response.json;
    expect(Object.keys(body)).toEqual([
      'outcome',
      'orderId',
      'customerInfo',
      'shippingInfo',
      'billingInfo',
      'shippingMethod',
      'taxes',
      'transactionDetails',
    ]);
    const networkTransactionId = body.transactionDetails.networkTransactionId;
    expect(networkTransactionId).toMatch(/^\d{15}$/);
    expect(body).toEqual({
      outcome: 'success',
      orderId,
      customerInfo: {
        email: TEST_SHOPPER_EMAIL,
        paymentMethod: {
          address: addressInfo,
          addressId: card.billingAddressId,
          cardBrand: 'visa',
          expMonth: 12,
          expYear: card.expYear,
          externalId: card.paymentId,
          fullNameCard: 'Taylor Shopper',
          isDefault: true,
          last4CardNumber: '1111',
          needsCvv: false,
          nickName: null,
          paymentToken: expect.stringMatching(/^ptk_[A-Za-z0-9_-]{32}$/),
          storedCredentialsIdentifier: networkTransactionId,
        },
        phoneNumber: '+15125550100',
      },
      shippingInfo: addressInfo,
      billingInfo: addressInfo,
      shippingMethod: GROUND,
      taxes: 305, // 3700 ¢ at 8.25 % = 305.25 ¢
      transactionDetails: {
        networkTransactionId,
        gatewayTransactionId: expect.stringMatching(/^gtx_/),
        gatewayResponse: expect.objectContaining({ status: 'AUTHORIZED' }),
      },
    });
    expect(Object.keys(body.customerInfo.paymentMethod.address)).toEqual(ADDRESS_KEYS);
    expect(Number.isInteger(body.customerInfo.paymentMethod.addressId)).toBe(true);
    const { gatewayResponse, gatewayTransactionId } = body.transactionDetails;
    expect(gatewayResponse.id).toBe(gatewayTransactionId);
    expect(gatewayResponse.network.transactionId).toBe(networkTransactionId);
    expect(gatewayResponse.amount).toBe(3700 + 500 + 305);
    expect(JSON.stringify(body)).not.toContain('4111111111111111');
    expect(proxy.count()).toBe(before + 1);

    const order = await service.services.orders.find(orderId);
    expect(order).toMatchObject({ status: 'SUCCEEDED', payment: { chargedAmount: 4505, taxAmount: 305 } });
    expect((await cardEnding(await signIn(await createOrder(shop)), '1111')).paymentId).toBe(card.paymentId);
  });

  it('pays with 4444 and names the first payment as the stored credential of the next', async () => {
    const first = await payWith(plain, '4444');
    expect(first.response.json.outcome).toBe('success');
    const firstId = first.response.json.transactionDetails.networkTransactionId;
    expect(first.response.json.customerInfo.paymentMethod).toMatchObject({
      cardBrand: 'mastercard',
      last4CardNumber: '4444',
      isDefault: false,
      storedCredentialsIdentifier: firstId,
    });
    expect(first.response.json.transactionDetails.gatewayResponse.storedCredential).toMatchObject({
      type: 'initial',
    });
    const second = await payWith(plain, '4444');
    expect(second.response.json.transactionDetails.gatewayResponse.storedCredential).toMatchObject({
      type: 'subsequent',
      previousNetworkTransactionId: firstId,
    });
    expect(second.response.json.customerInfo.paymentMethod.storedCredentialsIdentifier).toBe(firstId);
  });

  it("keeps a card's stored credential per merchant: another merchant's first payment is initial, and never sees the id", async () => {
    const base = { allowedOrigins: [SHOP], webhookUrl: receiver.url };
    const { merchantId: a } = await service.merchant({ ...base, name: 'Shop A' });
    const { merchantId: b } = await service.merchant({ ...base, name: 'Shop B' });
    const storedCredentialOf = (paid: Awaited<ReturnType<typeof payWith>>) =>
      paid.response.json.transactionDetails.gatewayResponse.storedCredential;
    const initial = { type: 'initial', initiator: 'cardholder', previousNetworkTransactionId: null };

    // The card has paid at other merchants of this file already: at A it starts anew all the same.
    const firstAtA = await payWith(a, '1111');
    expect(firstAtA.response.json.outcome).toBe('success');
    const aId = firstAtA.response.json.transactionDetails.networkTransactionId;
    expect(storedCredentialOf(firstAtA)).toEqual(initial);
    expect(firstAtA.response.json.customerInfo.paymentMethod.storedCredentialsIdentifier).toBe(aId);

    const firstAtB = await payWith(b, '1111');
    expect(firstAtB.response.json.outcome).toBe('success');
    const bId = firstAtB.response.json.transactionDetails.networkTransactionId;
    expect(bId).not.toBe(aId);
    expect(storedCredentialOf(firstAtB)).toEqual(initial);
    expect(firstAtB.response.json.customerInfo.paymentMethod.storedCredentialsIdentifier).toBe(bId);
    expect(JSON.stringify(firstAtB.response.json)).not.toContain(aId);
    const webhookToB = await until(async () =>
      receiver.received.find((webhook) => JSON.parse(webhook.body).orderId === firstAtB.orderId),
    );
    expect(JSON.parse(webhookToB.body)).toMatchObject({ eventName: 'ORDER_SUCCEEDED', merchantId: b });
    expect(webhookToB.body).not.toContain(aId);

    const secondAtA = await payWith(a, '1111');
    expect(storedCredentialOf(secondAtA)).toEqual({
      type: 'subsequent',
      initiator: 'cardholder',
      previousNetworkTransactionId: aId,
    });
    expect(secondAtA.response.json.customerInfo.paymentMethod.storedCredentialsIdentifier).toBe(aId);
  });

  it("keeps, through the upgrade to stored credentials per merchant, a card's one id for the merchant of its first payment", async () => {
    const base = { allowedOrigins: [SHOP], webhookUrl: receiver.url };
    const { merchantId: a } = await service.merchant({ ...base, name: 'Upgraded A' });
    const { merchantId: b } = await service.merchant({ ...base, name: 'Upgraded B' });
    const { wallet, db } = service.services;
    const card = await addTestShopperCard(wallet, '4012888888881881');
    const aId = (await payWith(a, '1881')).response.json.transactionDetails.networkTransactionId;
    await payWith(b, '1881');
    // As a version before 024_stored_credentials left it: the card's one id, and no id per merchant.
    await db.kysely.deleteFrom('stored_credentials').where('card_id', '=', card.id).execute();
    await db.kysely
      .updateTable('cards')
      .set({ stored_credentials_identifier: aId })
      .where('id', '=', card.id)
      .execute();

    await copyCardWideIdentifiers(db.kysely as unknown as Kysely<unknown>);
    const copied = await db.kysely
      .selectFrom('stored_credentials')
      .select(['merchant_id', 'network_transaction_id'])
      .where('card_id', '=', card.id)
      .execute();
    expect(copied).toEqual([{ merchant_id: a, network_transaction_id: aId }]);
    const nextAtA = await payWith(a, '1881');
    expect(nextAtA.response.json.transactionDetails.gatewayResponse.storedCredential).toEqual({
      type: 'subsequent',
      initiator: 'cardholder',
      previousNetworkTransactionId: aId,
    });
    expect(nextAtA.response.json.customerInfo.paymentMethod.storedCredentialsIdentifier).toBe(aId);
  });

  it.each([
    ['0002', '995', 'Unable to process card'],
    ['0069', '990', 'Card was declined'],
    ['0119', '-1', null],
  ])('answers the card ending %s with error %s', async (last4, errorCode, errorMessage) => {
    const { orderId, response } = await payWith(plain, last4);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ outcome: 'error', orderId, errorCode, errorMessage });
    const order = await service.services.orders.find(orderId);
    expect(order).toMatchObject({ status: 'FAILED', error: { code: errorCode, message: errorMessage } });
  });

  it('computes taxes on the billing state when nothing is shipped, and answers {} for shipping', async () => {
    const { response } = await payWith(plain, '1111');
    expect(response.json).toMatchObject({
      outcome: 'success',
      shippingInfo: {},
      shippingMethod: {},
      taxes: 231,
    });
    // 3700 ¢ at 6.25 % = 231.25 ¢
  });

  it('quotes subtotal, shipping, taxes and total', async () => {
    const orderId = await createOrder(shop);
    const token = await signIn(orderId);
    const wallet = await walletOf(token);
    const quote = (body: Record<string, unknown>) =>
      service.call('POST', `/checkout/api/orders/${orderId}/quote`, { body, headers: bearer(token) });
    expect((await quote({})).json).toEqual({
      currency: 'USD',
      subtotal: 3700,
      shipping: 0,
      taxes: 0,
      total: 3700,
    });
    expect(
      (await quote({ shippingAddressId: wallet.addresses[0].addressId, shippingMethodId: 'ground' })).json,
    ).toEqual({ currency: 'USD', subtotal: 3700, shipping: 500, taxes: 305, total: 4505 });
    const unknownMethod = await quote({ shippingMethodId: 'express' });
    expect(unknownMethod.status).toBe(400);
    expect(unknownMethod.json.errorMessage).toBe('shippingMethodId: must be one of ground');
  });

  it('refuses a payment whose total changed since the quote the shopper saw, charging nothing', async () => {
    const { merchantId } = await service.merchant({
      allowedOrigins: [SHOP],
      webhookUrl: receiver.url,
      name: 'Repricing Shop',
      shippingMethods: [GROUND],
    });
    const orderId = await createOrder(merchantId);
    const token = await signIn(orderId);
    const wallet = await walletOf(token);
    const choice = {
      paymentId: (await cardEnding(token, '1111')).paymentId,
      shippingAddressId: wallet.addresses[0].addressId,
      shippingMethodId: 'ground',
    };
    const quoted = await service.call('POST', `/checkout/api/orders/${orderId}/quote`, {
      body: choice,
      headers: bearer(token),
    });
    expect(quoted.json.total).toBe(4200);
    await service.services.merchants.update(
      merchantId,
      { shippingMethods: [{ ...GROUND, price: 4200 }] },
      TEST_ACTOR,
    );

    const stale = await pay(orderId, token, { ...choice, total: 4200 });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({
      errorCode: 'TOTAL_CHANGED',
      errorMessage:
        'total is 7900 now, not 4200: the merchant changed a shipping price or tax rate since the quote; show the new total and pay again.',
    });
    const summary = await service.call('GET', `/checkout/api/orders/${orderId}`);
    expect(summary.json.status).toBe('CREATED');

    const paid = await pay(orderId, token, { ...choice, total: 7900 });
    expect([paid.status, paid.json.outcome]).toEqual([200, 'success']);
  });

  it('refuses a total above 99999999 cents at quote and pay alike, charging nothing; the order stays payable', async () => {
    const { merchantId } = await service.merchant({
      allowedOrigins: [SHOP],
      webhookUrl: receiver.url,
      name: 'Big Ticket Shop',
      taxSettings: { ratesByState: { TX: 625 } },
    });
    const orderId = await createOrder(merchantId, { lineItems: [{ SKU: 'CAR', amount: 99_999_999 }] });
    const token = await signIn(orderId);
    const choice = { paymentId: (await cardEnding(token, '1111')).paymentId };
    const quote = (body: Record<string, unknown>) =>
      service.call('POST', `/checkout/api/orders/${orderId}/quote`, { body, headers: bearer(token) });
    expect((await quote({})).json).toMatchObject({ taxes: 0, total: 99_999_999 });
    // 99,999,999 ¢ at 6.25 % = 6,249,999.94 ¢ → 6,250,000 ¢ of taxes on the card's Texas billing address.
    const refusal = {
      errorCode: 'VALIDATION_ERROR',
      errorMessage:
        'The total of $1,062,499.99 with shipping and taxes is more than one payment can be ($999,999.99). Choose another shipping method or address, or ask the shop to split the order.',
    };
    const quoted = await quote(choice);
    expect([quoted.status, quoted.json]).toEqual([400, refusal]);

    const before = proxy.count();
    const refused = await pay(orderId, token, choice);
    expect([refused.status, refused.json]).toEqual([400, refusal]);
    expect(proxy.count()).toBe(before);
    expect((await service.call('GET', `/checkout/api/orders/${orderId}`)).json.status).toBe('CREATED');

    await service.services.merchants.update(merchantId, { taxSettings: { ratesByState: {} } }, TEST_ACTOR);
    const paid = await pay(orderId, token, { ...choice, total: 99_999_999 });
    expect([paid.status, paid.json.outcome]).toEqual([200, 'success']);
  });

  it('requires the shipping choice when the merchant ships, and refuses it when it does not', async () => {
    const orderId = await createOrder(shop);
    const token = await signIn(orderId);
    const card = await cardEnding(token, '1111');
    const missing = await pay(orderId, token, { paymentId: card.paymentId });
    expect(missing.status).toBe(400);
    expect(missing.json.errorMessage).toBe('shippingAddressId is required: Shipping Shop ships this order');

    const other = await createOrder(plain);
    const otherToken = await signIn(other);
    const refused = await pay(other, otherToken, { paymentId: card.paymentId, shippingMethodId: 'ground' });
    expect(refused.status).toBe(400);
    expect(refused.json.errorMessage).toBe('shippingMethodId: Digital Shop does not ship; leave it out');
  });

  it('gives an XML gateway response as its text', async () => {
    const { response } = await payWith(xml, '1111');
    const { transactionDetails } = response.json;
    expect(typeof transactionDetails.gatewayResponse).toBe('string');
    expect(transactionDetails.gatewayResponse).toContain(transactionDetails.gatewayTransactionId);
    expect(transactionDetails.gatewayResponse).toContain(transactionDetails.networkTransactionId);
    expect(transactionDetails.stpReferenceNum).toBeUndefined();
  });

  it('gives connected merchants an stpReferenceNum', async () => {
    const { response } = await payWith(connected, '1111');
    const { transactionDetails } = response.json;
    expect(transactionDetails.stpReferenceNum).toEqual(expect.any(String));
    expect(transactionDetails.gatewayResponse.stpReferenceNum).toBe(transactionDetails.stpReferenceNum);
  });

  it('never charges twice: a repeated pay answers the first outcome, a concurrent one that it is under way', async () => {
    const orderId = await createOrder(plain);
    const token = await signIn(orderId);
    const card = await cardEnding(token, '1111');
    const before = proxy.count();
    const answers = await Promise.all([
      pay(orderId, token, { paymentId: card.paymentId }),
      pay(orderId, token, { paymentId: card.paymentId }),
    ]);
    const first = answers.find((answer) => answer.json.outcome === 'success');
    expect(first?.status).toBe(200);
    const other = answers.find((answer) => answer !== first);
    // Pending if it came while the first was paying; refused if both started the payment at once.
    const otherSaid = other?.status === 409 ? other.json.errorCode : other?.json.outcome;
    expect(['pending', 'ORDER_STATE_CONFLICT', 'success']).toContain(otherSaid);
    const again = await pay(orderId, token, { paymentId: card.paymentId });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first?.json);
    expect(proxy.count()).toBe(before + 1);
  });

  it('keeps a payment whose gateway gave no decision pending, and looks its decision up when submitted again: charged once', async () => {
    const orderId = await createOrder(slow.merchantId);
    const token = await signIn(orderId);
    const card = await cardEnding(token, '1111');
    const body = { paymentId: card.paymentId, cvv: '123' };
    const asks = () => proxy.forwarded.filter((entry) => entry.idempotencyKey === orderId);
    // The gateway authorizes, and its answer is lost; so is the answer to the retry after the time-out.
    proxy.loseNextAnswers(2);
    const first = await pay(orderId, token, body);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ outcome: 'pending', orderId });
    expect(asks().map(({ replayed, delivered }) => ({ replayed, delivered }))).toEqual([
      { replayed: false, delivered: false },
      { replayed: true, delivered: false },
    ]);
    const order = await service.call('GET', `/orders/${orderId}`, { apiKey: slow.apiKey });
    expect(order.json).toMatchObject({ status: 'PROCESSING', error: null });

    // While the last ask could still be running (`askLasts`): pending, nothing sent.
    expect((await pay(orderId, token, body)).json).toEqual({ outcome: 'pending', orderId });
    expect(asks()).toHaveLength(2);
    expect(proxy.lookedUp).not.toContain(orderId);
    // The payment under way is the one recorded: another card cannot take its place.
    const other = await cardEnding(token, '4444');
    const switched = await pay(orderId, token, { paymentId: other.paymentId });
    expect(switched.status).toBe(409);
    expect(switched.json).toEqual({
      errorCode: 'ORDER_STATE_CONFLICT',
      errorMessage: `paymentId: order ${orderId} has a payment under way with another card (${card.paymentId}); it cannot change now.`,
    });

    const settled = await until(async () => {
      const answer = await pay(orderId, token, body);
      return answer.json.outcome !== 'pending' && answer;
    }, 20 * SLOW_GATEWAY_TIMEOUT_MS);
    expect(settled.status).toBe(200);
    expect(settled.json.outcome).toBe('success');
    // Looked up, not sent again: the decision made for the first request, which nothing else can repeat.
    expect(proxy.lookedUp.filter((key) => key === orderId)).toHaveLength(1);
    expect(asks()).toHaveLength(2);
    const [lost] = asks();
    expect(settled.json.transactionDetails.gatewayResponse).toEqual(JSON.parse(lost?.body ?? ''));
    const webhook = await until(async () =>
      receiver.received.map((received) => JSON.parse(received.body)).find((sent) => sent.orderId === orderId),
    );
    expect(webhook).toMatchObject({ eventName: 'ORDER_SUCCEEDED', status: 'SUCCEEDED' });
  });

  it('emits a signed ORDER_SUCCEEDED webhook', async () => {
    const { orderId } = await payWith(plain, '1111');
    const delivered = () =>
      receiver.received.find(
        (webhook) => (JSON.parse(webhook.body) as { orderId?: string }).orderId === orderId,
      );
    await expect.poll(delivered, { timeout: 5_000 }).toBeDefined();
    const webhook = delivered();
    if (!webhook) throw new Error('no webhook');
    const payload = verifiedBody(plainSecret, webhook);
    expect(payload).toMatchObject({
      eventName: 'ORDER_SUCCEEDED',
      merchantId: plain,
      orderId,
      status: 'SUCCEEDED',
    });
  });

  it('refuses a token issued for another order', async () => {
    const mine = await createOrder(plain);
    const token = await signIn(mine);
    const card = await cardEnding(token, '1111');
    const other = await createOrder(plain);
    const response = await pay(other, token, { paymentId: card.paymentId });
    expect(response.status).toBe(401);
    expect(response.json).toEqual({
      errorCode: 'SHOPPER_UNAUTHORIZED',
      errorMessage: `The shopper token was issued for another order than ${other}.`,
    });
    expect((await service.services.orders.find(other))?.status).toBe('CREATED');
  });

  it('refuses a card that is not the shopper’s, and a CVV-less pay of a card that needs one', async () => {
    const orderId = await createOrder(plain);
    const token = await signIn(orderId);
    const unknown = await pay(orderId, token, { paymentId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.json.errorCode).toBe('PAYMENT_METHOD_NOT_FOUND');

    const card = await addTestShopperCard(service.services.wallet, '5105105105105100', true);
    const withoutCvv = await pay(orderId, token, { paymentId: card.id });
    expect(withoutCvv.status).toBe(400);
    expect(withoutCvv.json.errorMessage).toBe('cvv is required: this card needs its security code');
    expect((await service.services.orders.find(orderId))?.status).toBe('CREATED');
    const withCvv = await pay(orderId, token, { paymentId: card.id, cvv: '123' });
    expect(withCvv.json.outcome).toBe('success');
  });

  it('hands a merchant-mode order over as a payment selection usable by POST /payments/credentials', async () => {
    const before = proxy.count();
    const { orderId, card, wallet, response } = await payWith(merchantMode.merchantId, '4444');
    expect(response.status).toBe(200);
    const { addressId: _addressId, ...billing } = wallet.addresses[0];
    expect(response.json).toEqual({
      outcome: 'payment-selected',
      selection: {
        orderId,
        sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        paymentId: card.paymentId,
        billingInfo: billing,
        shippingInfo: {},
        shippingMethod: {},
        taxes: 0,
      },
    });
    expect(proxy.count()).toBe(before);
    const credentials = await service.call('POST', '/payments/credentials', {
      apiKey: merchantMode.apiKey,
      body: {
        paymentId: card.paymentId,
        sessionId: response.json.selection.sessionId,
        amount: 3700,
        merchantReference: orderId,
        currency: 'USD',
      },
    });
    expect(credentials.status).toBe(200);
    expect(credentials.json).toMatchObject({ code: 200, message: 'OK' });
  });

  it("binds the selection's session to the card and the total the shopper chose", async () => {
    const { orderId, wallet, response } = await payWith(merchantMode.merchantId, '4444');
    const other = wallet.cards.find((entry: { last4CardNumber: string }) => entry.last4CardNumber === '1111');
    const { sessionId, paymentId } = response.json.selection;
    const ask = (body: { paymentId: string; amount: number }) =>
      service.call('POST', '/payments/credentials', {
        apiKey: merchantMode.apiKey,
        body: { sessionId, merchantReference: orderId, currency: 'USD', ...body },
      });
    const otherCard = await ask({ paymentId: other.paymentId, amount: 3700 });
    expect([otherCard.status, otherCard.json]).toEqual([
      404,
      {
        errorCode: 'PAYMENT_METHOD_NOT_FOUND',
        errorMessage: `paymentId ${other.paymentId} was not found in this session.`,
      },
    ]);
    const more = await ask({ paymentId, amount: 3701 });
    expect([more.status, more.json]).toEqual([
      422,
      {
        errorCode: 'AMOUNT_EXCEEDS_SELECTION',
        errorMessage:
          "amount 3701 is more than the 3700 cents the shopper agreed to in this session's checkout.",
      },
    ]);
    expect((await ask({ paymentId, amount: 3700 })).status).toBe(200);
    expect((await ask({ paymentId, amount: 1200 })).status).toBe(200);
    // The merchant's own carousel session still allows any card of the wallet.
    const carousel = await service.call('POST', '/sandbox/sessions', {
      apiKey: merchantMode.apiKey,
      body: {},
    });
    const viaCarousel = await service.call('POST', '/payments/credentials', {
      apiKey: merchantMode.apiKey,
      body: {
        sessionId: carousel.json.sessionId,
        paymentId: other.paymentId,
        amount: 99_999_999,
        merchantReference: 'carousel-1',
        currency: 'USD',
      },
    });
    expect(viaCarousel.status).toBe(200);
  });

  it("moves a merchant-mode order to PROCESSING at the selection and links the merchant's external response", async () => {
    const { orderId, card, token, response } = await payWith(merchantMode.merchantId, '1111');
    const { sessionId } = response.json.selection;
    const orderView = async () =>
      (await service.call('GET', `/orders/${orderId}`, { apiKey: merchantMode.apiKey })).json;
    expect(await orderView()).toMatchObject({
      status: 'PROCESSING',
      total: 3700,
      email: TEST_SHOPPER_EMAIL,
      transactionDetails: null,
      merchantAuthorization: { sessionId, paymentId: card.paymentId, externalResponse: null },
    });

    // A repeated submit answers the same selection; closing cannot abandon what the merchant is charging.
    const again = await pay(orderId, token, { paymentId: card.paymentId });
    expect(again.status).toBe(200);
    expect(again.json).toEqual(response.json);
    const closed = await service.call('POST', `/checkout/api/orders/${orderId}/close`);
    expect(closed.status).toBe(409);
    expect(closed.json.errorCode).toBe('ORDER_STATE_CONFLICT');

    const credentials = await service.call('POST', '/payments/credentials', {
      apiKey: merchantMode.apiKey,
      body: {
        paymentId: card.paymentId,
        sessionId,
        amount: 3700,
        merchantReference: orderId,
        currency: 'USD',
      },
    });
    expect(credentials.status).toBe(200);
    const reported = await service.call('POST', '/payments/externalresponse', {
      apiKey: merchantMode.apiKey,
      body: {
        paymentId: card.paymentId,
        pspRawResponse: '{"status":"APPROVED","id":"own_1"}',
        amount: 3700,
        pspHostName: 'own-processor',
        currency: 'USD',
        isRecurring: false,
      },
    });
    expect(reported.status).toBe(200);
    const order = await orderView();
    expect(order.status).toBe('PROCESSING');
    expect(order.merchantAuthorization).toEqual({
      sessionId,
      paymentId: card.paymentId,
      externalResponse: {
        externalResponseId: expect.any(String),
        pspHostName: 'own-processor',
        amount: 3700,
        currency: 'USD',
        isRecurring: false,
        reportedAt: expect.any(String),
      },
    });
    expect(JSON.stringify(order)).not.toContain('own_1');
  });

  it('keeps merchantAuthorization null for an order the service paid', async () => {
    const { orderId, response } = await payWith(plain, '1111');
    expect(response.json.outcome).toBe('success');
    const order = await service.call('GET', `/orders/${orderId}`, { apiKey: plainKey });
    expect(order.json).toMatchObject({ status: 'SUCCEEDED', merchantAuthorization: null });
  });

  it('closes the order', async () => {
    const orderId = await createOrder(plain);
    const closed = await service.call('POST', `/checkout/api/orders/${orderId}/close`);
    expect(closed.json).toEqual({ orderId, status: 'ABANDONED' });
    expect((await service.call('POST', `/checkout/api/orders/${orderId}/close`)).status).toBe(200);
    const otp = await service.call('POST', `/checkout/api/orders/${orderId}/otp`, {
      body: { email: TEST_SHOPPER_EMAIL },
    });
    expect(otp.status).toBe(409);
    expect(otp.json.errorCode).toBe('ORDER_STATE_CONFLICT');
  });

  it('enrols a new shopper, who then pays with the new card (CVV from the page, never stored)', async () => {
    const orderId = await createOrder(plain);
    const email = `new.${engine}@example.com`;
    const unknown = await service.call('POST', `/checkout/api/orders/${orderId}/otp`, { body: { email } });
    expect(unknown.json).toEqual({ status: 'enrol' });
    const enrolment = {
      email,
      firstName: 'Nova',
      lastName: 'Buyer',
      phone: '+15035550123',
      card: {
        number: '4242 4242 4242 4242',
        expMonth: 11,
        expYear: new Date().getUTCFullYear() + 2,
        cvv: '737',
      },
      billingAddress: { address1: '5 Pine St', city: 'Austin', state: 'TX', zip: '78702', country: 'US' },
    };
    const enrol = await service.call('POST', `/checkout/api/orders/${orderId}/enrol`, { body: enrolment });
    expect(enrol.status).toBe(200);
    expect(enrol.json).toEqual({ status: 'sent', destination: expect.any(String) });
    const throttled = await service.call('POST', `/checkout/api/orders/${orderId}/enrol`, {
      body: enrolment,
    });
    expect(throttled.status).toBe(429);
    expect(throttled.json.errorCode).toBe('OTP_THROTTLED');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // Card data only inside the encrypted details, and the CVV not even there. (Matching "737" against the
    // whole row would also hit ids, ciphertexts and timestamps that contain those digits by chance.)
    const [stored] = await service.services.db.kysely
      .selectFrom('pending_enrolments')
      .selectAll()
      .where('order_id', '=', orderId)
      .execute();
    expect(stored).toEqual({
      id: expect.any(String),
      order_id: orderId,
      email_normalized: email,
      details_ciphertext: expect.any(String),
      created_at: expect.any(Number),
      expires_at: expect.any(Number),
    });
    expect(stored?.details_ciphertext).not.toContain('4242424242424242');
    const details = service.services.keyRing.open(
      stored?.details_ciphertext ?? '',
      'pending_enrolments.details_ciphertext',
      stored?.id as string,
    );
    expect(details).toContain('4242424242424242');
    expect(details).not.toMatch(/cvv/i);
    expect(details).not.toContain('737');

    const messages = await service.call('GET', `/sandbox/messages?to=${encodeURIComponent(email)}`);
    const code = /\b(\d{6})\b/.exec(JSON.stringify(messages.json))?.[1];
    expect(code).toBeDefined();
    const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
      body: { email, code },
    });
    expect(verified.status).toBe(200);
    const token = verified.json.shopperToken;
    const wallet = await walletOf(token);
    expect(wallet).toMatchObject({ email, phone: '+15035550123', firstName: 'Nova' });
    expect(wallet.cards).toEqual([expect.objectContaining({ last4CardNumber: '4242', isDefault: true })]);
    // The audit trail has the wallet's start: where, and that a code proved the email.
    const shopper = await service.services.wallet.findShopperByEmail(email);
    const started = await new AuditTrail(service.services.db).list({ subject: shopper?.id as string });
    const at = { orderId, proof: 'code', enrolment: true };
    expect(started.map(({ actor, action, details }) => ({ actor, action, details }))).toEqual([
      {
        actor: `shopper:${shopper?.id}`,
        action: 'wallet.address_added',
        details: { addressId: wallet.addresses[0].addressId, ...at },
      },
      {
        actor: `shopper:${shopper?.id}`,
        action: 'wallet.card_added',
        details: { paymentId: wallet.cards[0].paymentId, ...at },
      },
    ]);
    const response = await pay(orderId, token, { paymentId: wallet.cards[0].paymentId, cvv: '737' });
    expect(response.json).toMatchObject({
      outcome: 'success',
      taxes: 231,
      customerInfo: { email, phoneNumber: '+15035550123', paymentMethod: { last4CardNumber: '4242' } },
    });
    const again = await service.call('POST', `/checkout/api/orders/${await createOrder(plain)}/enrol`, {
      body: enrolment,
    });
    expect(again.status).toBe(409);
    expect(again.json.errorCode).toBe('SHOPPER_ALREADY_EXISTS');
  });

  it('asks an enrolment for the security code only where the service pays', async () => {
    const { cvv: _cvv, ...card } = {
      number: '4242 4242 4242 4242',
      expMonth: 11,
      expYear: new Date().getUTCFullYear() + 2,
      cvv: '737',
    };
    const enrolment = (email: string) => ({
      email,
      firstName: 'Nova',
      lastName: 'Buyer',
      phone: '+15035550123',
      card,
      billingAddress: { address1: '5 Pine St', city: 'Austin', state: 'TX', zip: '78702', country: 'US' },
    });
    const refused = await service.call('POST', `/checkout/api/orders/${await createOrder(plain)}/enrol`, {
      body: enrolment(`no-cvv.service.${engine}@example.com`),
    });
    expect([refused.status, refused.json.errorCode]).toEqual([400, 'VALIDATION_ERROR']);
    expect(refused.json.errorMessage).toMatch(/^card\.cvv is required/);
    const ownProcessor = await createOrder(merchantMode.merchantId);
    const taken = await service.call('POST', `/checkout/api/orders/${ownProcessor}/enrol`, {
      body: enrolment(`no-cvv.merchant.${engine}@example.com`),
    });
    expect(taken.status).toBe(200);
    expect(taken.json.status).toBe('sent');
  });
});
