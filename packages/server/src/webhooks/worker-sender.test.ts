import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import type { CredentialEntry, PaymentCredentialsPayload } from '../payments/types.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { openReadOnlyDb } from './read-only-db.js';

const VISA_PAN = '4111111111111111';

interface Held {
  headers: http.IncomingHttpHeaders;
  body: string;
  response: http.ServerResponse;
}

/** A merchant endpoint that answers only when told to: requests wait in `held` meanwhile. */
async function startHoldingReceiver() {
  const held: Held[] = [];
  const waiters: { n: number; resolve(request: Held): void }[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      held.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), response });
      for (const waiter of waiters.filter((w) => w.n <= held.length)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(held[waiter.n - 1] as Held);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    held,
    nth: (n: number) =>
      new Promise<Held>((resolve) => {
        const hit = held[n - 1];
        if (hit) resolve(hit);
        else waiters.push({ n, resolve });
      }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type HoldingReceiver = Awaited<ReturnType<typeof startHoldingReceiver>>;

function verify(secret: string, request: { headers: http.IncomingHttpHeaders; body: string }) {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id'] as string,
    'webhook-timestamp': request.headers['webhook-timestamp'] as string,
    'webhook-signature': request.headers['webhook-signature'] as string,
  }) as PaymentCredentialsPayload;
}

describe.each(engines())('webhook delivery worker on %s', (engine) => {
  let service: TestService;
  let receiver: HoldingReceiver;
  let shop: { merchantId: string; apiKey: string; webhookSecret: string };
  let visa: string;
  let sessionId: string;

  const requestCredentials = async (merchantReference: string) => {
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: { paymentId: visa, sessionId, amount: 2599, merchantReference, currency: 'USD' },
    });
    expect(response.status).toBe(200);
    return response.json.requestId as string;
  };

  const stateOf = (requestId: string) =>
    until(async () => {
      const found = await service.call('GET', `/payments/credentials/${requestId}`, { apiKey: shop.apiKey });
      return found.json.state !== 'ACKNOWLEDGED' && found.json;
    });

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startHoldingReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    sessionId = session.sessionId;
    visa = session.paymentMethods.find((method) => method.last4CardNumber === '1111')?.paymentId as string;
  });
  afterEach(() => {
    for (const { response } of receiver.held) if (!response.writableEnded) response.end('ok');
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('is on by default and delivers signed, verifiable credentials, its network token provisioned by the main thread', async () => {
    const worker = service.services.deliveryWorker;
    expect(worker?.thread).toBeDefined();
    const card = await service.services.wallet.findCard(visa);
    const tokens = () =>
      service.services.db.kysely
        .selectFrom('network_tokens')
        .select('vault_id')
        .where('vault_id', '=', card?.vaultId as string)
        .execute();
    // The worker's handle refuses writes, so this first delivery has the main thread provision the token.
    expect(await tokens()).toHaveLength(0);

    const arrived = receiver.nth(receiver.held.length + 1);
    const requestId = await requestCredentials('order-worker-1');
    const webhook = await arrived;
    webhook.response.end('ok');

    const payload = verify(shop.webhookSecret, webhook);
    expect(payload).toMatchObject({
      eventName: 'PAYMENT_CREDENTIALS',
      paymentId: visa,
      merchantId: shop.merchantId,
      merchantReference: 'order-worker-1',
    });
    const [token, pan] = payload.credentials as [
      Extract<CredentialEntry, { type: 'NETWORK_TOKEN' }>,
      Extract<CredentialEntry, { type: 'PAN' }>,
    ];
    expect(token).toMatchObject({ type: 'NETWORK_TOKEN', token: expect.stringMatching(/^4\d{15}$/) });
    expect(pan).toMatchObject({ type: 'PAN', pan: VISA_PAN });
    expect(await tokens()).toHaveLength(1);
    expect((await stateOf(requestId)).state).toBe('DELIVERED');
  });

  it('loses nothing when the worker dies mid-flight: a new worker sends the same message again', async () => {
    const worker = service.services.deliveryWorker;
    const first = worker?.thread;
    const before = receiver.held.length;
    const arrived = receiver.nth(before + 1);
    const requestId = await requestCredentials('order-worker-2');
    const held = await arrived;

    const again = receiver.nth(before + 2);
    await first?.terminate();
    const resent = await again;
    resent.response.end('ok');

    expect(worker?.thread).toBeDefined();
    expect(worker?.thread).not.toBe(first);
    expect(resent.headers['webhook-id']).toBe(held.headers['webhook-id']);
    expect(resent.body).toBe(held.body);
    expect(verify(shop.webhookSecret, resent).merchantReference).toBe('order-worker-2');

    const delivered = await stateOf(requestId);
    expect(delivered.state).toBe('DELIVERED');
    expect(delivered.webhook.attempts).toEqual([
      expect.objectContaining({
        statusCode: null,
        error: expect.stringContaining('webhook delivery worker stopped'),
      }),
      expect.objectContaining({ statusCode: 200, error: null }),
    ]);
    expect(service.logs.join('')).toContain('the webhook delivery worker stopped; restarting it');
    expect(service.logs.join('')).not.toContain(VISA_PAN);
  });
});

describe.each(engines())('WEBHOOK_WORKER=off on %s', (engine) => {
  let service: TestService;
  let receiver: HoldingReceiver;

  beforeAll(async () => {
    service = await startTestService(engine, { WEBHOOK_WORKER: 'off' });
    receiver = await startHoldingReceiver();
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('delivers from the main thread, with no worker', async () => {
    expect(service.services.deliveryWorker).toBeUndefined();
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    const arrived = receiver.nth(1);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: {
        paymentId: session.paymentMethods[0]?.paymentId,
        sessionId: session.sessionId,
        amount: 100,
        merchantReference: 'order-in-thread',
        currency: 'USD',
      },
    });
    expect(response.status).toBe(200);
    const webhook = await arrived;
    webhook.response.end('ok');
    expect(verify(shop.webhookSecret, webhook).merchantReference).toBe('order-in-thread');
  });
});

describe.each(engines())("the worker's database handle on %s", (engine) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await testDatabase(engine);
    const db = createDb(database.url);
    await migrate(db);
    await db.close();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('reads, and refuses to write', async () => {
    const readOnly = await openReadOnlyDb(database.url, { poolSize: 1, onIdleError: () => undefined });
    try {
      expect(await readOnly.kysely.selectFrom('webhook_messages').selectAll().execute()).toEqual([]);
      await expect(
        readOnly.kysely.deleteFrom('webhook_messages').where('id', '=', 'msg_none').execute(),
      ).rejects.toThrow(/readonly|read-only/i);
    } finally {
      await readOnly.close();
    }
  });
});
