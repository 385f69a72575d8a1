/**
 * Payments a process stopped or died in the middle of: the order was PROCESSING when the process went,
 * and the sweep of another (or the restarted) process settles it by asking the gateway again with the
 * order's id as idempotency key. Over real HTTP: the service, the sandbox gateway behind a proxy that
 * counts authorizations, and a webhook receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentAttempt } from '../orders/index.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { Secret } from '../secret.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines } from '../test-support/db.js';
import { type GatewayProxy, startGatewayProxy } from '../test-support/gateway-proxy.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../test-support/sandbox-gateway.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import type { Address, Card } from '../wallet/index.js';
import { STALLED_PAYMENT_MS, UNDECIDED_PAYMENT_MS } from './payment.js';

const SHOP = 'https://shop.example';
const ORDER = { lineItems: [{ SKU: 'TEE', amount: 2500 }] };
const VISA_1111 = '4111111111111111';

describe.each(engines())('payments left under way by a stopped process, on %s', (engine) => {
  let gateway: SandboxGatewayServer;
  let proxy: GatewayProxy;
  let receiver: Receiver;
  let service: TestService;
  let shop: Awaited<ReturnType<TestService['merchant']>>;

  beforeAll(async () => {
    gateway = await startSandboxGateway();
    proxy = await startGatewayProxy(gateway.url);
    receiver = await startReceiver();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: proxy.url });
    shop = await service.merchant({ allowedOrigins: [SHOP], webhookUrl: receiver.url });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await proxy?.close();
    await gateway?.close();
  });

  /** The authorizations the gateway got for `orderId` (its idempotency key). */
  const keysOf = (orderId: string) => proxy.forwarded.filter((entry) => entry.idempotencyKey === orderId);
  /** A new order of `merchantId`, and the test shopper's choice of the card ending 1111 to pay it. */
  const chosenOrder = async (merchantId: string) => {
    const created = await service.call('POST', '/checkout/orders', {
      body: { merchantId, order: ORDER },
      headers: { origin: SHOP },
    });
    expect(created.status).toBe(201);
    const orderId = created.json.orderId as string;
    const { wallet } = service.services;
    const shopper = await wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
    const card = (await wallet.listCards(shopper?.id as string)).find((entry) => entry.last4 === '1111');
    const billing = await wallet.findAddress(card?.billingAddressId as number);
    const attempt: PaymentAttempt = {
      email: TEST_SHOPPER_EMAIL,
      shopperId: shopper?.id as string,
      paymentId: card?.id as string,
      shippingAddressId: null,
      billingAddressId: billing?.externalId as string,
      shippingMethod: null,
      shippingAmount: 0,
      taxAmount: 0,
      chargedAmount: 2500,
    };
    return { orderId, attempt, card: card as Card, billing: billing as Address };
  };
  /**
   * An order taken to PROCESSING as the payment step does just before it calls the gateway: where a
   * process that died there left it.
   */
  const processingOrder = async (merchantId: string) => {
    const chosen = await chosenOrder(merchantId);
    await service.services.orders.markProcessing(chosen.orderId, chosen.attempt);
    return chosen;
  };
  /**
   * A PROCESSING order whose authorization the gateway already decided, as the payment step asks for it
   * (with `cvv` if given), before its process died without recording the decision.
   */
  const decidedByTheGateway = async (cvv?: Secret<string>) => {
    const { orderId, card: chosen, billing } = await processingOrder(shop.merchantId);
    // The card as the process that died read it: an earlier payment with it at this merchant named its
    // stored credential there.
    const card = (await service.services.wallet.findCard(chosen.id)) as Card;
    const previous = await service.services.wallet.storedCredentialsIdentifier(card.id, shop.merchantId);
    expect(previous).not.toBeNull();
    const { connector, credentials } = await service.services.gateways.gatewayOf(shop.merchantId);
    const { firstName, lastName, address1, address2, city, state, zip, country, phoneNumber } = billing;
    const decided = await connector.authorize(
      {
        amount: 2500,
        currency: 'USD',
        orderReference: orderId,
        source: {
          type: 'card',
          pan: new Secret(VISA_1111),
          expMonth: card.expMonth,
          expYear: card.expYear,
          ...(cvv ? { cvv } : {}),
        },
        billingAddress: { firstName, lastName, address1, address2, city, state, zip, country, phoneNumber },
        storedCredential: {
          kind: 'subsequent',
          initiator: 'cardholder',
          previousNetworkTransactionId: previous as string,
        },
        variant: 'standard',
        idempotencyKey: orderId,
      },
      credentials,
    );
    return { orderId, decided };
  };
  const orderOf = async (orderId: string) =>
    (await service.call('GET', `/orders/${orderId}`, { apiKey: shop.apiKey })).json;
  /** A sweep that takes every payment under way as stalled, as one 10 minutes later would. */
  const sweepLater = () => service.services.checkout.settleStalledPayments(Date.now() + 1);

  it('leaves a payment under way for less than 10 minutes to the process paying it', async () => {
    const { orderId } = await processingOrder(shop.merchantId);
    expect(STALLED_PAYMENT_MS).toBe(600_000);
    expect(await service.services.checkout.settleStalledPayments()).toBe(0);
    expect((await orderOf(orderId)).status).toBe('PROCESSING');
    expect(keysOf(orderId)).toHaveLength(0);
    // Settled here, so that the next tests' sweeps count only their own orders.
    expect(await sweepLater()).toBe(1);
  });

  it('settles one whose gateway call never happened: the gateway decides now, once, and the merchant hears of it', async () => {
    const { orderId } = await processingOrder(shop.merchantId);
    expect(await sweepLater()).toBe(1);
    expect(keysOf(orderId)).toHaveLength(1);
    const order = await orderOf(orderId);
    expect(order).toMatchObject({
      status: 'SUCCEEDED',
      transactionDetails: { gatewayTransactionId: expect.any(String) },
    });
    const webhook = await until(() =>
      receiver.received.map((received) => JSON.parse(received.body)).find((body) => body.orderId === orderId),
    );
    expect(webhook).toMatchObject({ eventName: 'ORDER_SUCCEEDED', merchantId: shop.merchantId });
    // Settled: a second sweep finds nothing, and the gateway is not asked again.
    expect(await sweepLater()).toBe(0);
    expect(keysOf(orderId)).toHaveLength(1);
  });

  it('settles one whose gateway had decided before the process died: with that decision, charged once', async () => {
    const { orderId, decided } = await decidedByTheGateway();
    expect(decided.outcome).toBe('approved');
    expect(await sweepLater()).toBe(1);
    expect((await orderOf(orderId)).transactionDetails.gatewayTransactionId).toBe(
      decided.gatewayTransactionId,
    );
  });

  it('settles one whose gateway decided a request with the CVV, which the sweep does not have: looked up, not sent again', async () => {
    const { orderId, decided } = await decidedByTheGateway(new Secret('123'));
    expect(decided.outcome).toBe('approved');
    const sent = keysOf(orderId).length;
    expect(await sweepLater()).toBe(1);
    expect(await orderOf(orderId)).toMatchObject({
      status: 'SUCCEEDED',
      transactionDetails: { gatewayTransactionId: decided.gatewayTransactionId },
    });
    expect(proxy.lookedUp).toContain(orderId);
    expect(keysOf(orderId)).toHaveLength(sent);
  });

  it('keeps under way, never failed, one whose gateway cannot be reached when asked again', async () => {
    const { orderId, decided } = await decidedByTheGateway(new Secret('123'));
    proxy.failNext(1);
    expect(await sweepLater()).toBe(1);
    expect(await orderOf(orderId)).toMatchObject({ status: 'PROCESSING', error: null });
    expect(await sweepLater()).toBe(1);
    expect((await orderOf(orderId)).transactionDetails.gatewayTransactionId).toBe(
      decided.gatewayTransactionId,
    );
  });

  it('goes on past an order it cannot settle now, and tries it again at the next sweep', async () => {
    const broken = await processingOrder(shop.merchantId);
    await service.services.db.kysely
      .updateTable('orders')
      .set({ billing_address_id: 'adr_gone' })
      .where('id', '=', broken.orderId)
      .execute();
    const { orderId } = await processingOrder(shop.merchantId);
    expect(await sweepLater()).toBe(1);
    expect((await orderOf(orderId)).status).toBe('SUCCEEDED');
    expect((await orderOf(broken.orderId)).status).toBe('PROCESSING');
    const warned = service.logs
      .map((line) => JSON.parse(line))
      .filter((line) => line.orderId === broken.orderId && line.level === 40);
    expect(warned.map((line) => line.msg)).toContain(
      'could not settle a payment left under way; the next sweep tries again',
    );
    await service.services.orders.markFailed(broken.orderId, '-1', null);
  });

  it('asks again at the next sweep for one the gateway gave no decision for, and settles it with the decision made', async () => {
    const slow = await service.merchant({ allowedOrigins: [SHOP], webhookUrl: receiver.url });
    await service.services.gateways.set(
      slow.merchantId,
      { gateway: 'sandbox', style: 'json', url: proxy.url, timeoutMs: 300 },
      { apiKey: 'sk_sandbox_slow' },
      TEST_ACTOR,
    );
    const { orderId } = await processingOrder(slow.merchantId);
    const order = async () => (await service.call('GET', `/orders/${orderId}`, { apiKey: slow.apiKey })).json;
    // The gateway decides, and the answers to the ask and to its retry are lost on the way back.
    proxy.loseNextAnswers(2);
    expect(await sweepLater()).toBe(1);
    expect(await order()).toMatchObject({ status: 'PROCESSING', error: null });
    expect(keysOf(orderId).map(({ replayed, delivered }) => ({ replayed, delivered }))).toEqual([
      { replayed: false, delivered: false },
      { replayed: true, delivered: false },
    ]);

    expect(await sweepLater()).toBe(1);
    const [lost] = keysOf(orderId);
    expect(await order()).toMatchObject({
      status: 'SUCCEEDED',
      transactionDetails: { gatewayResponse: JSON.parse(lost?.body ?? '') },
    });
    expect(keysOf(orderId).filter((entry) => !entry.replayed)).toHaveLength(1);
  });

  it('fails with -1, without asking, one still under way 20 hours after its order was created', async () => {
    const { orderId } = await processingOrder(shop.merchantId);
    // Asked now, a gateway that kept the idempotency key 24 hours from the first ask may have dropped it.
    expect(UNDECIDED_PAYMENT_MS).toBe(20 * 3_600_000);
    await service.services.db.kysely
      .updateTable('orders')
      .set({ created_at: Date.now() - UNDECIDED_PAYMENT_MS - 1 })
      .where('id', '=', orderId)
      .execute();
    expect(await sweepLater()).toBe(1);
    expect(await orderOf(orderId)).toMatchObject({ status: 'FAILED', error: { errorCode: '-1' } });
    expect(keysOf(orderId)).toHaveLength(0);
    const logged = service.logs.map((line) => JSON.parse(line)).filter((line) => line.orderId === orderId);
    expect(logged.map((line) => [line.level, line.msg])).toContainEqual([
      50,
      'a payment left under way cannot be asked for again; the order fails with -1: check the gateway for a charge',
    ]);
  });

  it("never takes an order handed to the merchant's own processor", async () => {
    const own = await service.merchant({
      allowedOrigins: [SHOP],
      webhookUrl: receiver.url,
      authorizationMode: 'merchant',
    });
    const { orderId, attempt } = await chosenOrder(own.merchantId);
    await service.services.orders.markSelected(orderId, attempt, 'ses_test');
    expect(await sweepLater()).toBe(0);
    expect(keysOf(orderId)).toHaveLength(0);
  });
});
