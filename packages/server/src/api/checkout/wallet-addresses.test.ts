import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../../test-support/sandbox-gateway.js';
import { signInTestShopper, startTestService, type TestService } from '../../test-support/service.js';
import { MAX_ADDRESSES } from '../../wallet/index.js';

const SHOP = 'https://shop.example';
const ADDRESS = {
  firstName: 'Taylor',
  lastName: 'Shopper',
  address1: '9 Moved St',
  city: 'Denver',
  state: 'CO',
  zip: '80202',
  country: 'US',
};

describe.each(engines())('checkout page API: a signed-in shopper removes an address on %s', (engine) => {
  let gateway: SandboxGatewayServer;
  let service: TestService;
  let merchantId: string;

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: gateway.url });
    ({ merchantId } = await service.merchant({
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
  const remove = (headers: Record<string, string>, addressId: number | string) =>
    service.call('DELETE', `/checkout/api/wallet/addresses/${addressId}`, { headers });
  const pay = async (orderId: string, headers: Record<string, string>, shippingAddressId: number) => {
    const [card] = (await walletOf(headers)).cards;
    return service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: { paymentId: card.paymentId, shippingAddressId, shippingMethodId: 'ground', cvv: '123' },
    });
  };

  it('removes an address: gone from the wallet and refused for payments, while a paid order still answers with it', async () => {
    const first = await signIn();
    const added = await service.call('POST', '/checkout/api/wallet/addresses', {
      headers: first.headers,
      body: ADDRESS,
    });
    expect(added.status).toBe(201);
    const { addressId } = added.json;
    const paid = await pay(first.orderId, first.headers, addressId);
    expect([paid.status, paid.json.outcome]).toEqual([200, 'success']);

    const removed = await remove(first.headers, addressId);
    expect(removed.status).toBe(200);
    expect(removed.json.addresses.map((address: { addressId: number }) => address.addressId)).not.toContain(
      addressId,
    );
    expect(removed.json.addresses.length).toBeGreaterThan(0);

    const second = await signIn();
    const refused = await pay(second.orderId, second.headers, addressId);
    expect([refused.status, refused.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);
    expect(refused.json.errorMessage).toContain('shippingAddressId');
    // The paid order, asked again, still says where it went.
    const again = await pay(first.orderId, first.headers, addressId);
    expect([again.status, again.json.shippingInfo.address1]).toEqual([200, '9 Moved St']);

    const twice = await remove(first.headers, addressId);
    expect(twice.status).toBe(200);
    const unknown = await remove(first.headers, 2_000_000);
    expect([unknown.status, unknown.json.errorCode]).toEqual([404, 'ADDRESS_NOT_FOUND']);
    const malformed = await remove(first.headers, 'home');
    expect([malformed.status, malformed.json.errorCode]).toEqual([400, 'VALIDATION_ERROR']);
    expect(malformed.json.errorMessage).toContain('addressId');
    const anonymous = await service.call('DELETE', `/checkout/api/wallet/addresses/${addressId}`);
    expect([anonymous.status, anonymous.json.errorCode]).toEqual([401, 'SHOPPER_UNAUTHORIZED']);
  });

  it("answers 409 ADDRESS_IN_USE for a card's billing address", async () => {
    const { headers } = await signIn();
    const wallet = await walletOf(headers);
    const billing = wallet.cards[0].billingAddressId;
    const refused = await remove(headers, billing);
    expect([refused.status, refused.json.errorCode]).toEqual([409, 'ADDRESS_IN_USE']);
    expect(refused.json.errorMessage).toMatch(/billing address of the \w+ card ending in \d{4}/);
    expect((await walletOf(headers)).addresses).toEqual(wallet.addresses);
  });

  it(`answers 409 WALLET_FULL once the wallet holds ${MAX_ADDRESSES} addresses`, async () => {
    const { headers } = await signIn();
    const add = () => service.call('POST', '/checkout/api/wallet/addresses', { headers, body: ADDRESS });
    for (let held = (await walletOf(headers)).addresses.length; held < MAX_ADDRESSES; held++) {
      expect((await add()).status).toBe(201);
    }
    const full = await add();
    expect([full.status, full.json.errorCode]).toEqual([409, 'WALLET_FULL']);
    expect(full.json.errorMessage).toContain(`${MAX_ADDRESSES} addresses`);
  });
});
