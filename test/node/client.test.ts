/**
 * The merchant library against the real service over HTTP, on each engine, with a real webhook
 * receiver: what a merchant's server does with it, from asking for credentials to reconciling orders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PaymentCredentialsEvent,
  type SandboxSession,
  verifyWebhook,
  WalletCheckout,
  WalletCheckoutError,
  type WebhookEvent,
  webhookId,
} from '../../packages/node/src/index.js';
import { engines } from '../../packages/server/src/test-support/db.js';
import {
  type ReceivedWebhook,
  type Receiver,
  startReceiver,
} from '../../packages/server/src/test-support/receiver.js';
import { startTestService, type TestService } from '../../packages/server/src/test-support/service.js';
import { until } from '../../packages/server/src/test-support/wait.js';

const ORIGIN = 'https://shop.example';

describe.each(engines())('the merchant library against the service on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string; webhookSecret: string };
  let wallet: WalletCheckout;
  let session: SandboxSession;

  const verified = (webhook: ReceivedWebhook): WebhookEvent =>
    verifyWebhook({ secret: shop.webhookSecret, body: webhook.body, headers: webhook.headers });

  /**
   * The first webhook from the `from`-th received on (1-based) whose event matches: webhooks of earlier
   * tests' requests may still be arriving.
   */
  const receivedWhere = async (from: number, match: (event: WebhookEvent) => boolean) => {
    for (let n = from; ; n++) {
      const webhook = await receiver.nth(n);
      if (match(verified(webhook))) return webhook;
    }
  };
  const about = (merchantReference: string) => (event: WebhookEvent) =>
    'merchantReference' in event && event.merchantReference === merchantReference;

  const credentialsFor = (merchantReference: string) => ({
    paymentId: session.paymentMethods[0]?.paymentId as string,
    sessionId: session.sessionId,
    amount: 2599,
    merchantReference,
    currency: 'USD',
  });

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url, allowedOrigins: [ORIGIN] });
    wallet = new WalletCheckout({ apiKey: shop.apiKey, baseUrl: service.url });
    session = await wallet.sandbox.createSession({ email: 'test.shopper@example.com' });
  });

  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('asks for credentials, verifies their webhook, reports the processor’s answer and reads the request', async () => {
    const delivered = receivedWhere(receiver.received.length + 1, about('lib-flow-1'));
    const ack = await wallet.payments.requestCredentials(credentialsFor('lib-flow-1'));
    expect(ack).toEqual({ code: 200, message: 'OK', requestId: expect.stringMatching(/^crq_/) });

    const event = verified(await delivered);
    expect(event.eventName).toBe('PAYMENT_CREDENTIALS');
    const credentials = event as PaymentCredentialsEvent;
    expect(credentials.merchantReference).toBe('lib-flow-1');
    expect(credentials.credentials.map((credential) => credential.type)).toEqual(['NETWORK_TOKEN', 'PAN']);

    const reported = await wallet.payments.reportExternalResponse({
      paymentId: credentials.paymentId,
      pspRawResponse: '{"status":"approved","id":"psp_1"}',
      amount: 2599,
      pspHostName: 'processor.example',
      currency: 'USD',
      isRecurring: false,
    });
    expect(reported).toEqual({
      code: 200,
      message: 'OK',
      externalResponseId: expect.stringMatching(/^ext_/),
      requestId: ack.requestId,
    });

    const request = await until(async () => {
      const read = await wallet.payments.getCredentialsRequest(ack.requestId);
      return read.state === 'DELIVERED' && read;
    });
    expect(request).toMatchObject({
      requestId: ack.requestId,
      merchantReference: 'lib-flow-1',
      amount: 2599,
    });
    expect(request.externalResponses).toHaveLength(1);
    const found = await wallet.payments.findCredentialsRequests('lib-flow-1');
    expect(found.map((each) => each.requestId)).toEqual([ack.requestId]);
  });

  it('replays a POST sent again with its idempotency key, doing the work once', async () => {
    const idempotencyKey = `lib-replay-${engine}`;
    const first = await wallet.payments.requestCredentials(credentialsFor('lib-replay'), { idempotencyKey });
    const again = await wallet.payments.requestCredentials(credentialsFor('lib-replay'), { idempotencyKey });
    expect(again).toEqual(first);
    expect([first.lastResponse.replayed, again.lastResponse.replayed]).toEqual([false, true]);
    expect(again.lastResponse).toMatchObject({ status: 200, idempotencyKey });
    expect(again.lastResponse.requestId).not.toBe(first.lastResponse.requestId);
    expect(await wallet.payments.findCredentialsRequests('lib-replay')).toHaveLength(1);
    const another = await wallet.payments.requestCredentials(credentialsFor('lib-replay'));
    const latest = await wallet.payments.findCredentialsRequests('lib-replay', { limit: 1 });
    expect(latest.map((each) => each.requestId)).toEqual([another.requestId]);
  });

  it('lists the credentials requests made since a time, by state, page after page', async () => {
    const since = new Date().toISOString();
    const made: string[] = [];
    for (const n of [1, 2, 3])
      made.push((await wallet.payments.requestCredentials(credentialsFor(`lib-list-${n}`))).requestId);
    await until(async () => {
      const states = await Promise.all(
        made.map(async (id) => (await wallet.payments.getCredentialsRequest(id)).state),
      );
      return states.every((state) => state === 'DELIVERED');
    });
    const listed = async (query: Parameters<typeof wallet.payments.listCredentialsRequests>[0]) => {
      const ids: string[] = [];
      for await (const request of wallet.payments.listCredentialsRequests(query)) ids.push(request.requestId);
      return ids;
    };
    // Requests of one millisecond follow their ids: compared as sets, then as the one-page list's order.
    const all = await listed({ createdSince: since });
    expect(new Set(all)).toEqual(new Set(made));
    expect(await listed({ createdSince: since, limit: 1 })).toEqual(all);
    expect(await listed({ createdSince: since, state: 'DELIVERED' })).toEqual(all);
    expect(await listed({ createdSince: since, state: 'FAILED' })).toEqual([]);
    const refused = listed({ state: 'PENDING' as 'FAILED' });
    await expect(refused).rejects.toMatchObject({ status: 400, errorCode: 'VALIDATION_ERROR' });
  });

  it('throws the service’s refusals with their status, errorCode, message and request id', async () => {
    const refusal = (call: Promise<unknown>) =>
      call.then(
        () => expect.fail('the call succeeded'),
        (error: unknown) => error as WalletCheckoutError,
      );

    const badAmount = await refusal(
      wallet.payments.requestCredentials({ ...credentialsFor('lib-bad'), amount: 25.99 }),
    );
    expect(badAmount).toBeInstanceOf(WalletCheckoutError);
    expect(badAmount.status).toBe(400);
    expect(badAmount.errorMessage).toMatch(/amount/);
    expect(badAmount.requestId).toEqual(expect.any(String));

    const missing = await refusal(wallet.orders.get('ord_missing'));
    expect([missing.status, missing.errorCode]).toEqual([404, 'ORDER_NOT_FOUND']);

    const stranger = new WalletCheckout({ apiKey: 'sk_test_unknown', baseUrl: service.url, maxRetries: 0 });
    const unknownKey = await refusal(stranger.orders.get('ord_missing'));
    expect([unknownKey.status, unknownKey.errorCode]).toEqual([401, 'UNAUTHORIZED']);

    const idempotencyKey = `lib-reused-${engine}`;
    await wallet.payments.requestCredentials(credentialsFor('lib-reused-1'), { idempotencyKey });
    const reused = await refusal(
      wallet.payments.requestCredentials(credentialsFor('lib-reused-2'), { idempotencyKey }),
    );
    expect([reused.status, reused.errorCode]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
  });

  it('lists every matching order, following the pages', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await service.call('POST', '/checkout/orders', {
        body: {
          merchantId: shop.merchantId,
          order: { orderId: `shop-order-${i}`, lineItems: [{ SKU: 'TEE', amount: 2500 }] },
        },
        headers: { origin: ORIGIN },
      });
      expect(response.status, response.text).toBe(201);
      created.push(response.json.orderId);
    }
    const listed: string[] = [];
    for await (const order of wallet.orders.list({ limit: 2, status: 'CREATED' })) listed.push(order.orderId);
    expect(listed).toEqual([...created].reverse());

    const byOwnId: string[] = [];
    for await (const order of wallet.orders.list({ merchantOrderId: 'shop-order-3' })) {
      byOwnId.push(order.merchantOrderId as string);
    }
    expect(byOwnId).toEqual(['shop-order-3']);
    expect((await wallet.orders.get(created[0] as string)).status).toBe('CREATED');
    expect((await wallet.orders.find(created[0] as string))?.orderId).toBe(created[0]);
    expect(await wallet.orders.find('ord_missing')).toBeUndefined();

    const open = await wallet.orders.confirm(created[0] as string, {
      merchantOrderId: 'shop-order-0',
      subtotal: 2500,
    });
    expect(open).toMatchObject({ paid: false, reason: expect.stringMatching(/is CREATED, not SUCCEEDED/) });
    expect(open.order?.orderId).toBe(created[0]);
    expect(await wallet.orders.confirm('ord_missing', { merchantOrderId: 'x', subtotal: 1 })).toEqual({
      paid: false,
      reason: 'No order ord_missing for this merchant.',
      order: null,
    });
  });

  it('reads, resends and tests webhooks, and lists what the trail recorded', async () => {
    const delivered = receivedWhere(receiver.received.length + 1, about('lib-resend'));
    const ack = await wallet.payments.requestCredentials(credentialsFor('lib-resend'));
    const first = await delivered;
    const [request] = await until(async () => {
      const found = await wallet.payments.findCredentialsRequests('lib-resend');
      return found[0]?.state === 'DELIVERED' && found;
    });
    const messageId = request?.webhook?.messageId as string;
    expect(messageId).toBe(webhookId(first.headers));

    const listed: string[] = [];
    for await (const message of wallet.webhooks.listMessages({ subjectId: ack.requestId }))
      listed.push(message.id);
    expect(listed).toEqual([messageId]);
    const message = await wallet.webhooks.getMessage(messageId);
    expect(message.attempts.map((attempt) => attempt.statusCode)).toEqual([200]);

    const resent = receivedWhere(receiver.received.length + 1, about('lib-resend'));
    expect(await wallet.webhooks.resend(messageId)).toMatchObject({ id: messageId });
    const again = await resent;
    expect(webhookId(new Headers(again.headers as Record<string, string>))).toBe(messageId);
    expect(verified(again)).toEqual(verified(first));

    const tested = receivedWhere(receiver.received.length + 1, (event) => event.eventName === 'WEBHOOK_TEST');
    expect(await wallet.webhooks.test()).toMatchObject({ delivered: true, statusCode: 200 });
    expect(verified(await tested)).toMatchObject({ eventName: 'WEBHOOK_TEST', merchantId: shop.merchantId });

    expect(await wallet.webhooks.recover({ since: new Date(Date.now() - 60_000).toISOString() })).toEqual({
      recovered: 0,
      hasMore: false,
      notSent: 0,
    });

    const actions: string[] = [];
    for await (const event of wallet.auditEvents.list({ limit: 1 })) actions.push(event.action);
    expect(actions).toContain('webhook.resent');
  });

  it('reads and changes its account, and rotates its webhook secret', async () => {
    const other = await service.merchant({ webhookUrl: receiver.url });
    const client = new WalletCheckout({ apiKey: other.apiKey, baseUrl: service.url });
    expect(await client.account.get()).toMatchObject({
      merchantId: other.merchantId,
      webhookUrl: receiver.url,
    });
    const updated = await client.account.update({ allowedOrigins: [ORIGIN], rememberDevices: false });
    expect(updated).toMatchObject({
      allowedOrigins: [ORIGIN],
      rememberDevices: false,
      webhookUrl: receiver.url,
    });

    const { webhookSecret, olderWebhookSecretsUntil } = await client.account.rotateWebhookSecret({
      overlapSeconds: 60,
    });
    expect(olderWebhookSecretsUntil).toHaveLength(1);
    expect(await client.webhooks.test()).toMatchObject({ delivered: true });
    const webhook = await until(async () =>
      receiver.received.find((received) => received.body.includes(other.merchantId)),
    );
    for (const secret of [webhookSecret, other.webhookSecret]) {
      expect(verifyWebhook({ secret, body: webhook.body, headers: webhook.headers })).toMatchObject({
        eventName: 'WEBHOOK_TEST',
      });
    }
  });
});
