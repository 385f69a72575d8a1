import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Retention } from './retention.js';
import { engines } from './test-support/db.js';
import { type Receiver, startReceiver } from './test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from './test-support/service.js';
import { until } from './test-support/wait.js';
import { insertMessages, newMessage } from './webhooks/index.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe.each(engines())('retention on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let refusing: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    refusing = await startReceiver();
    // One retry: a refused message is given up (FAILED) after its second attempt.
    service = await startTestService(engine, { CREDENTIALS_RETRY_DELAYS_MS: '20' });
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
    await refusing.close();
  });

  /** A Retention of `days` over the service's own parts, whose clock reads `shiftMs` ahead. */
  const retention = (days: number, shiftMs: number, batch?: number) => {
    const { db, webhooks, payments, clock } = service.services;
    return new Retention({ db, days, webhooks, payments, now: () => clock.now() + shiftMs, batch });
  };

  /** Asks for credentials and waits until the request's webhook message is settled. */
  const settledRequest = async (apiKey: string, merchantReference: string, on = service) => {
    const session = await on.session(apiKey);
    const body = credentialsBody(session, { merchantReference });
    const answer = await on.call('POST', '/payments/credentials', { apiKey, body });
    expect(answer.status).toBe(200);
    const requestId = answer.json.requestId as string;
    await until(async () => {
      const lookup = await on.call('GET', `/payments/credentials/${requestId}`, { apiKey });
      return lookup.json.state !== 'ACKNOWLEDGED';
    });
    return { requestId, body };
  };

  const SHOP = 'https://shop.example';

  /** An order made as the SDK makes one, from an allowed origin of the merchant's shop. */
  const createOrder = async (merchantId: string) => {
    const created = await service.call('POST', '/checkout/orders', {
      headers: { origin: SHOP },
      body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
    });
    expect(created.status).toBe(201);
    return created.json.orderId as string;
  };

  /** An order the shopper closed without paying: ABANDONED. */
  const abandonedOrder = async (merchantId: string) => {
    const orderId = await createOrder(merchantId);
    const close = await service.call('POST', `/checkout/api/orders/${orderId}/close`);
    expect(close.json.status).toBe('ABANDONED');
    return orderId;
  };

  it('deletes settled messages, their attempts, requests and external responses after the retention', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const delivered = [
      await settledRequest(shop.apiKey, 'kept-a'),
      await settledRequest(shop.apiKey, 'kept-b'),
      await settledRequest(shop.apiKey, 'kept-c'),
    ];
    const reported = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: {
        ...delivered[0]?.body,
        pspRawResponse: '{"approved":true}',
        pspHostName: 'psp',
        isRecurring: false,
      },
    });
    expect(reported.status).toBe(200);
    refusing.respondWith(500, 500);
    const refused = await service.merchant({ webhookUrl: refusing.url });
    const failed = await settledRequest(refused.apiKey, 'given-up');
    expect(
      (await service.call('GET', `/payments/credentials/${failed.requestId}`, { apiKey: refused.apiKey }))
        .json.state,
    ).toBe('FAILED');
    // A message waiting for a retry a week away: PENDING, however old.
    await insertMessages(service.services.db.kysely, [
      newMessage(
        {
          merchantId: shop.merchantId,
          eventName: 'PAYMENT_CREDENTIALS',
          subjectId: 'crq_waiting',
          schedule: 'credentials',
        },
        service.services.clock.now() + 7 * DAY_MS,
        0,
      ),
    ]);
    const counts = async () => {
      const { kysely } = service.services.db;
      const count = async (
        table: 'webhook_messages' | 'webhook_attempts' | 'credentials_requests' | 'external_responses',
      ) =>
        Number(
          (
            await kysely
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return {
        messages: await count('webhook_messages'),
        attempts: await count('webhook_attempts'),
        requests: await count('credentials_requests'),
        externalResponses: await count('external_responses'),
      };
    };
    expect(await counts()).toEqual({ messages: 5, attempts: 5, requests: 4, externalResponses: 1 });

    // Settled within the last day: kept.
    expect(await retention(1, 0).sweep()).toEqual({
      messages: 0,
      credentialsRequests: 0,
      orders: 0,
      erasedCards: 0,
    });
    expect((await counts()).messages).toBe(5);

    // Two days on, in batches of two: every settled message goes, with what hangs on it.
    expect(await retention(1, 2 * DAY_MS, 2).sweep()).toEqual({
      messages: 4,
      credentialsRequests: 4,
      orders: 0,
      erasedCards: 0,
    });
    expect(await counts()).toEqual({ messages: 1, attempts: 0, requests: 0, externalResponses: 0 });
    for (const { requestId } of delivered) {
      const lookup = await service.call('GET', `/payments/credentials/${requestId}`, { apiKey: shop.apiKey });
      expect(lookup.status).toBe(404);
      expect(lookup.json.errorCode).toBe('CREDENTIALS_REQUEST_NOT_FOUND');
    }
    const listed = await service.call('GET', '/webhooks/messages', { apiKey: shop.apiKey });
    expect(listed.json.data.map((message: { subjectId: string }) => message.subjectId)).toEqual([
      'crq_waiting',
    ]);
  });

  it('deletes abandoned orders after the retention, counted from their expiry, and keeps the others', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url, allowedOrigins: [SHOP] });
    const closed = [
      await abandonedOrder(shop.merchantId),
      await abandonedOrder(shop.merchantId),
      await abandonedOrder(shop.merchantId),
    ];
    const open = await createOrder(shop.merchantId);
    const status = async (orderId: string) => {
      const lookup = await service.call('GET', `/orders/${orderId}`, { apiKey: shop.apiKey });
      return lookup.status === 404 ? lookup.json.errorCode : lookup.json.status;
    };

    // An order lives an hour: a day on, its expiry is not yet a day old.
    expect((await retention(1, DAY_MS).sweep()).orders).toBe(0);
    expect(await status(closed[0] as string)).toBe('ABANDONED');

    // A day and two hours on, in batches of two: the abandoned ones go; the open one is not ABANDONED.
    expect((await retention(1, DAY_MS + 2 * 60 * 60 * 1000, 2).sweep()).orders).toBe(3);
    for (const orderId of closed) expect(await status(orderId)).toBe('ORDER_NOT_FOUND');
    expect(await status(open)).toBe('CREATED');
  });

  it('deletes each message and order once when two processes sweep at the same time', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url, allowedOrigins: [SHOP] });
    for (const reference of ['twice-a', 'twice-b', 'twice-c', 'twice-d', 'twice-e']) {
      await settledRequest(shop.apiKey, reference);
      await abandonedOrder(shop.merchantId);
    }
    const [first, second] = await Promise.all([
      retention(1, 2 * DAY_MS, 2).sweep(),
      retention(1, 2 * DAY_MS, 2).sweep(),
    ]);
    expect((first?.messages ?? 0) + (second?.messages ?? 0)).toBe(5);
    expect((first?.credentialsRequests ?? 0) + (second?.credentialsRequests ?? 0)).toBe(5);
    expect((first?.orders ?? 0) + (second?.orders ?? 0)).toBe(5);
  });

  it('joins a sweep under way, and sweeps no more once stopped', async () => {
    const sweeper = retention(1, 2 * DAY_MS);
    const running = sweeper.sweep();
    expect(sweeper.sweep()).toBe(running);
    await running;
    await sweeper.stop();
    const shop = await service.merchant({ webhookUrl: receiver.url });
    await settledRequest(shop.apiKey, 'after-stop');
    expect(await sweeper.sweep()).toEqual({ messages: 0, credentialsRequests: 0, orders: 0, erasedCards: 0 });
    expect(await retention(1, 2 * DAY_MS).sweep()).toEqual({
      messages: 1,
      credentialsRequests: 1,
      orders: 0,
      erasedCards: 0,
    });
  });

  it('is on for 30 days by default; with RETENTION_DAYS=off it keeps every message and order', async () => {
    expect(service.services.config.retentionDays).toBe(30);
    const keeping = await startTestService(engine, { RETENTION_DAYS: 'off' });
    try {
      const shop = await keeping.merchant({ webhookUrl: receiver.url });
      await settledRequest(shop.apiKey, 'kept-for-good', keeping);
      const { db, webhooks, payments, clock, config } = keeping.services;
      expect(config.retentionDays).toBeUndefined();
      const later = () => clock.now() + 1000 * DAY_MS;
      const sweep = new Retention({ db, days: config.retentionDays, webhooks, payments, now: later }).sweep();
      expect(await sweep).toEqual({ messages: 0, credentialsRequests: 0, orders: 0, erasedCards: 0 });
      const listed = await keeping.call('GET', '/webhooks/messages', { apiKey: shop.apiKey });
      expect(listed.json.data).toHaveLength(1);
    } finally {
      await keeping.close();
    }
  });
});
