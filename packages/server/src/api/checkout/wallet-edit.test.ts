import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../../test-support/sandbox-gateway.js';
import { signInTestShopper, startTestService, type TestService } from '../../test-support/service.js';

const SHOP = 'https://shop.example';
const ADDRESS = {
  firstName: 'Taylor',
  lastName: 'Shopper',
  address1: '9 Typo St',
  city: 'Denver',
  state: 'CO',
  zip: '80202',
  country: 'US',
};

describe.each(engines())('checkout page API: a signed-in shopper edits the wallet on %s', (engine) => {
  let gateway: SandboxGatewayServer;
  let service: TestService;
  let merchantId: string;
  let apiKey: string;

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: gateway.url });
    ({ merchantId, apiKey } = await service.merchant({
      allowedOrigins: [SHOP],
      shippingMethods: [{ externalId: 'ground', name: 'Ground', price: 500 }],
    }));
  });
  afterAll(async () => {
    await service?.close();
    await gateway?.close();
  });

  const signIn = () => signInTestShopper(service, merchantId, SHOP);
  const walletOf = async (headers: Record<string, string>) =>
    (await service.call('GET', '/checkout/api/wallet', { headers })).json;
  const editAddress = (headers: Record<string, string>, addressId: number | string, body: unknown) =>
    service.call('PATCH', `/checkout/api/wallet/addresses/${addressId}`, { headers, body });
  const editCard = (headers: Record<string, string>, paymentId: string, body: unknown) =>
    service.call('PATCH', `/checkout/api/wallet/cards/${paymentId}`, { headers, body });
  const pay = (
    orderId: string,
    headers: Record<string, string>,
    paymentId: string,
    shippingAddressId: number,
  ) =>
    service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: { paymentId, shippingAddressId, shippingMethodId: 'ground', cvv: '123' },
    });

  it('edits an address under a new addressId, while the order paid with it still ships to the old one', async () => {
    const first = await signIn();
    const added = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: first.headers,
      body: ADDRESS,
    });
    const { addressId, externalId } = added.json;
    const [card] = (await walletOf(first.headers)).cards;
    const paid = await pay(first.orderId, first.headers, card.paymentId, addressId);
    expect([paid.status, paid.json.outcome]).toEqual([200, 'success']);

    const edited = await editAddress(first.headers, addressId, {
      address1: '9 Tulip St',
      isDefaultShipping: true,
    });
    expect(edited.status).toBe(200);
    expect(edited.json.address).toMatchObject({
      ...ADDRESS,
      address1: '9 Tulip St',
      isDefaultShipping: true,
    });
    expect(edited.json.address.addressId).not.toBe(addressId);
    expect(edited.json.address.externalId).not.toBe(externalId);
    const listed = edited.json.wallet.addresses.map((a: { addressId: number }) => a.addressId);
    expect(listed).toContain(edited.json.address.addressId);
    expect(listed).not.toContain(addressId);
    expect(
      edited.json.wallet.addresses.filter((a: { isDefaultShipping: boolean }) => a.isDefaultShipping),
    ).toEqual([edited.json.address]);
    expect(edited.json.wallet).toEqual(await walletOf(first.headers));

    // The paid order, asked again and as its merchant reads it, still names the address it was paid with.
    const again = await pay(first.orderId, first.headers, card.paymentId, addressId);
    expect([again.status, again.json.shippingInfo.address1]).toEqual([200, '9 Typo St']);
    const order = await service.call('GET', `/orders/${first.orderId}`, { apiKey });
    expect(order.json.shipping.addressId).toBe(externalId);

    const second = await signIn();
    const stale = await pay(second.orderId, second.headers, card.paymentId, addressId);
    expect([stale.status, stale.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);
    const fresh = await pay(second.orderId, second.headers, card.paymentId, edited.json.address.addressId);
    expect([fresh.status, fresh.json.outcome, fresh.json.shippingInfo.address1]).toEqual([
      200,
      'success',
      '9 Tulip St',
    ]);
    const replaced = await editAddress(first.headers, addressId, { city: 'Boulder' });
    expect([replaced.status, replaced.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);
  });

  it("moves a card's billing address with the edit, and edits a card's nickname, name, billing address and default", async () => {
    const { headers } = await signIn();
    const before = await walletOf(headers);
    const [card] = before.cards;
    const billing = await editAddress(headers, card.billingAddressId, { zip: '80203' });
    expect(billing.status).toBe(200);
    const moved = billing.json.wallet.cards.find(
      (c: { paymentId: string }) => c.paymentId === card.paymentId,
    );
    expect(moved.billingAddressId).toBe(billing.json.address.addressId);

    const other = await service.call('POST', '/checkout/api/wallet/addresses', { headers, body: ADDRESS });
    const edited = await editCard(headers, card.paymentId, {
      nickName: '  Groceries ',
      nameOnCard: 'T. Shopper',
      billingAddressId: other.json.addressId,
      isDefault: true,
    });
    expect(edited.status).toBe(200);
    expect(edited.json.card).toEqual({
      ...moved,
      nickName: 'Groceries',
      fullNameCard: 'T. Shopper',
      billingAddressId: other.json.addressId,
      isDefault: true,
    });
    expect(edited.json.wallet).toEqual(await walletOf(headers));
    const cleared = await editCard(headers, card.paymentId, { nickName: '' });
    expect([cleared.status, cleared.json.card.nickName]).toEqual([200, null]);
  });

  it('refuses a bad edit with 400 naming the field and the rule, changing nothing', async () => {
    const { headers } = await signIn();
    const wallet = await walletOf(headers);
    const [card] = wallet.cards;
    const [address] = wallet.addresses;
    for (const [body, message] of [
      [{}, 'body must name a field'],
      [{ address1: '' }, 'address1 must not be empty'],
      [{ country: 'usa' }, 'country must match ^[A-Z]{2}$'],
      [{ isDefaultShipping: false }, 'isDefaultShipping must be true'],
      [{ street: '1 Main St' }, 'body has an unknown field "street"'],
    ] as const) {
      const refused = await editAddress(headers, address.addressId, body);
      expect([refused.status, refused.json]).toEqual([
        400,
        { errorCode: 'VALIDATION_ERROR', errorMessage: message },
      ]);
    }
    for (const [body, message] of [
      [{}, 'body must name a field'],
      [{ nickName: 'x'.repeat(41) }, 'nickName must be at most 40 characters long'],
      [{ isDefault: false }, 'isDefault must be true'],
      [{ number: '4242424242424242' }, 'body has an unknown field "number"'],
      [{ billingAddressId: 2_000_000 }, "billingAddressId: no such address in the shopper's wallet"],
    ] as const) {
      const refused = await editCard(headers, card.paymentId, body);
      expect([refused.status, refused.json]).toEqual([
        400,
        { errorCode: 'VALIDATION_ERROR', errorMessage: message },
      ]);
    }
    expect(await walletOf(headers)).toEqual(wallet);
  });

  it("answers 404 for what is not in the shopper's wallet, and 401 without a shopper token or with two", async () => {
    const { headers } = await signIn();
    const unknownCard = await editCard(headers, 'no-such-card', { nickName: 'Mine' });
    expect([unknownCard.status, unknownCard.json.errorCode]).toEqual([404, 'PAYMENT_METHOD_NOT_FOUND']);
    const unknownAddress = await editAddress(headers, 2_000_000, { city: 'Boulder' });
    expect([unknownAddress.status, unknownAddress.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);
    const [card] = (await walletOf(headers)).cards;
    const anonymous = await service.call('PATCH', `/checkout/api/wallet/cards/${card.paymentId}`, {
      body: { nickName: 'Mine' },
    });
    expect([anonymous.status, anonymous.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
    const twice = await request(`${service.url}/checkout/api/wallet`, {
      headers: ['authorization', headers.authorization, 'Authorization', headers.authorization],
    });
    expect(twice.statusCode).toBe(401);
    expect(await twice.body.json()).toMatchObject({ errorCode: 'SHOPPER_UNAUTHORIZED' });
  });
});
