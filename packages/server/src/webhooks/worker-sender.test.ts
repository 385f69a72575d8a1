import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDb, type Engine } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../log.js';
import { PAYMENT_CREDENTIALS } from '../payments/credentials.js';
import type { RememberedRequest } from '../payments/payload.js';
import type { CredentialEntry, PaymentCredentialsPayload } from '../payments/types.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { openReadOnlyDb } from './read-only-db.js';
import { type DeliveryWorkerData, WorkerSender } from './worker-sender.js';

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

/** A credentials request body for the session's first card. */
function firstCardCredentials(
  session: Awaited<ReturnType<TestService['session']>>,
  merchantReference: string,
) {
  return {
    paymentId: session.paymentMethods[0]?.paymentId,
    sessionId: session.sessionId,
    amount: 100,
    merchantReference,
    currency: 'USD',
  };
}

/**
 * A test service started with `env` and a holding receiver, for the describe block that calls this;
 * requests still held are answered after each test.
 */
function serviceAndReceiver(engine: Engine, env: Record<string, string>) {
  const context = {} as { service: TestService; receiver: HoldingReceiver };
  beforeAll(async () => {
    context.service = await startTestService(engine, env);
    context.receiver = await startHoldingReceiver();
  });
  afterEach(() => {
    for (const { response } of context.receiver.held) if (!response.writableEnded) response.end('ok');
  });
  afterAll(async () => {
    await context.service.close();
    await context.receiver.close();
  });
  return context;
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

  const context = serviceAndReceiver(engine, { WEBHOOK_WORKER: '1' });
  beforeAll(async () => {
    ({ service, receiver } = context);
    shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    sessionId = session.sessionId;
    visa = session.paymentMethods.find((method) => method.last4CardNumber === '1111')?.paymentId as string;
  });

  it('delivers signed, verifiable credentials, its network token provisioned by the main thread', async () => {
    const worker = service.services.deliveryWorkers[0];
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
    const worker = service.services.deliveryWorkers[0];
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

  it('restarts a dead worker within its second also when the wall clock was set back an hour', async () => {
    const worker = service.services.deliveryWorkers[0];
    const first = worker?.thread;
    const before = receiver.held.length;
    const arrived = receiver.nth(before + 1);
    await requestCredentials('order-worker-clock');
    const held = await arrived;

    const again = receiver.nth(before + 2);
    const now = Date.now();
    const setBack = vi.spyOn(Date, 'now').mockImplementation(() => now - 3_600_000);
    try {
      await first?.terminate();
      const resent = await again;
      resent.response.end('ok');
      expect(worker?.thread).not.toBe(first);
      expect(resent.headers['webhook-id']).toBe(held.headers['webhook-id']);
    } finally {
      setBack.mockRestore();
    }
  });
});

describe.each(engines())('a starting service on %s', (engine) => {
  it('has started once its delivery threads have loaded: the first webhook waits for none', async () => {
    const service = await startTestService(engine, { WEBHOOK_WORKER: '2' });
    try {
      expect(service.services.deliveryWorkers.map((worker) => worker.ready)).toEqual([true, true]);
    } finally {
      await service.close();
    }
  });
});

describe.each(engines())('two delivery worker threads on %s', (engine) => {
  const context = serviceAndReceiver(engine, { WEBHOOK_WORKER: '2' });

  it('both run, and when one dies its attempts are sent again and nothing is lost', async () => {
    const { service, receiver } = context;
    const [first, second] = service.services.deliveryWorkers;
    const dying = first?.thread;
    expect(dying).toBeDefined();
    expect(second?.thread).toBeDefined();
    expect(second?.thread).not.toBe(dying);
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    const references = ['spread-1', 'spread-2', 'spread-3', 'spread-4'];
    const allHeld = receiver.nth(references.length);
    for (const merchantReference of references) {
      const response = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: firstCardCredentials(session, merchantReference),
      });
      expect(response.status).toBe(200);
    }
    await allHeld;

    // Which thread holds which attempt is the SpreadSender's choice (spread-sender.test.ts): the first
    // thread's are sent again, the others' are answered.
    await dying?.terminate();
    const answerAll = () => {
      for (const { response } of receiver.held) if (!response.writableEnded) response.end('ok');
    };
    const states = await until(async () => {
      answerAll();
      const found = await Promise.all(
        references.map((reference) =>
          service.call('GET', `/payments/credentials?merchantReference=${reference}`, {
            apiKey: shop.apiKey,
          }),
        ),
      );
      const settled = found.map((response) => response.json.data[0]?.state);
      return settled.every((state) => state === 'DELIVERED') && settled;
    });
    expect(states).toHaveLength(4);
    const ids = receiver.held.map((request) => request.headers['webhook-id']);
    expect(new Set(ids.slice(0, 4)).size).toBe(4);
    expect(ids.slice(0, 4)).toEqual(expect.arrayContaining(ids.slice(4)));
    for (const request of receiver.held) {
      expect(verify(shop.webhookSecret, request).merchantReference).toMatch(/^spread-/);
    }
    // Restarted, at most a second after it last started.
    const restarted = await until(async () => first?.thread !== dying && first?.thread);
    expect(restarted).not.toBe(second?.thread);
  });
});

describe.each(engines())('WEBHOOK_WORKER=off on %s', (engine) => {
  const context = serviceAndReceiver(engine, { WEBHOOK_WORKER: 'off' });

  it('delivers from the main thread, with no worker', async () => {
    const { service, receiver } = context;
    expect(service.services.deliveryWorkers).toEqual([]);
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const session = await service.session(shop.apiKey);
    const arrived = receiver.nth(1);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: firstCardCredentials(session, 'order-in-thread'),
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

/** A staging worker over the test database, with one connection to each receiver. */
function oneConnectionWorker(database: TestDatabase, timeoutMs: number): DeliveryWorkerData {
  return {
    databaseUrl: database.url,
    vaultKeys: undefined,
    dataDir: database.dataDir,
    env: 'staging',
    allowedNetworks: [],
    loopback: true,
    timeoutMs,
    connectionsPerOrigin: 1,
  };
}

describe('a batch of attempts the worker cannot be given', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await testDatabase('sqlite');
    const db = createDb(database.url);
    await migrate(db);
    await db.close();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('fails those attempts with the reason and keeps the worker serving the next', async () => {
    const sender = new WorkerSender({
      log: createLogger('silent'),
      worker: oneConnectionWorker(database, 1_000),
      // A function cannot cross to another thread: postMessage throws for the whole batch.
      remembered: (message) =>
        message.subjectId === 'crq_uncloneable'
          ? ({ request: { toString: () => 'not data' } } as unknown as RememberedRequest)
          : undefined,
      networkTokens: { provision: async () => undefined },
    });
    sender.start();
    try {
      const endpoint = Promise.resolve({ url: 'http://127.0.0.1:9/webhooks', secrets: ['whsec_dGVzdA=='] });
      const message = { id: 'msg_a', merchantId: 'mch_a', eventName: PAYMENT_CREDENTIALS };
      const refused = await sender.attempt(
        { ...message, subjectId: 'crq_uncloneable' },
        endpoint,
        Date.now(),
      );
      expect(refused).toMatchObject({ statusCode: null, latencyMs: 0 });
      expect(refused.error).toMatch(/could not be cloned/);
      const next = await sender.attempt({ ...message, subjectId: 'crq_missing' }, endpoint, Date.now());
      expect(next.error).toMatch(
        /payload could not be built: credentials request crq_missing no longer exists/,
      );
    } finally {
      await sender.close();
    }
  });
});

describe.each(engines())("a delivery worker thread and an attempt's send-by time on %s", (engine) => {
  let database: TestDatabase;
  let service: TestService;
  let receiver: HoldingReceiver;

  beforeAll(async () => {
    database = await testDatabase(engine);
    // The service only acknowledges: its messages are this test's to send, through its own worker.
    service = await startTestService(engine, { WEBHOOK_DISPATCH: 'off' }, { database });
    receiver = await startHoldingReceiver();
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
    await database.drop();
  });

  it('sends nothing past the send-by time given to the thread, and says why', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url, credentialTypes: ['PAN'] });
    const session = await service.session(shop.apiKey);
    for (const merchantReference of ['late', 'on-time']) {
      const response = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: firstCardCredentials(session, merchantReference),
      });
      expect(response.status).toBe(200);
    }
    const [late, onTime] = await service.services.db.kysely
      .selectFrom('webhook_messages')
      .select(['id', 'merchant_id', 'event_name', 'subject_id'])
      .where('merchant_id', '=', shop.merchantId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    const messageOf = (row: typeof late) => ({
      id: row?.id as string,
      merchantId: shop.merchantId,
      eventName: row?.event_name as string,
      subjectId: row?.subject_id as string,
    });
    const sender = new WorkerSender({
      log: createLogger('silent'),
      worker: oneConnectionWorker(database, 5_000),
      remembered: () => undefined,
      networkTokens: {
        provision: async () => {
          throw new Error('a PAN-only merchant needs no network token');
        },
      },
    });
    sender.start();
    try {
      const endpoint = Promise.resolve({ url: receiver.url, secrets: [shop.webhookSecret] });
      const attemptedAt = Date.now();
      const refused = await sender.attempt(messageOf(late), endpoint, attemptedAt, attemptedAt - 1);
      expect(refused).toEqual({
        statusCode: null,
        latencyMs: 0,
        error: 'Not sent: it waited for a connection to the receiver past its lease.',
        timedOut: false,
        leaseRanOut: true,
      });
      const sent = sender.attempt(messageOf(onTime), endpoint, Date.now(), Date.now() + 60_000);
      const arrived = await receiver.nth(1);
      arrived.response.end('ok');
      expect(await sent).toMatchObject({ statusCode: 200, error: null });
      expect(receiver.held.map((request) => request.headers['webhook-id'])).toEqual([onTime?.id]);
      expect(verify(shop.webhookSecret, arrived).merchantReference).toBe('on-time');
    } finally {
      await sender.close();
    }
  });
});
