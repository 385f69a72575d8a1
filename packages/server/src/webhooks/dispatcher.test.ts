import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../log.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines, testDatabase } from '../test-support/db.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { until } from '../test-support/wait.js';
import {
  type AttemptOutcome,
  type AttemptSender,
  Dispatcher,
  type DispatcherOptions,
  type MessageForPayload,
  type WebhookEndpoint,
} from './dispatcher.js';
import { insertMessages, newMessage } from './outbox.js';
import { WebhookRepo } from './repo.js';
import { Sender } from './sender.js';
import { Webhooks } from './service.js';
import { WebhookDestinations } from './url-guard.js';

const MERCHANT = 'mch_dispatch';
/** A second merchant, with a receiver of its own. */
const OTHER_MERCHANT = 'mch_dispatch_other';
/** A third merchant, whose webhook URL has the same origin as MERCHANT's (a platform's endpoint). */
const SAME_ORIGIN_MERCHANT = 'mch_dispatch_same_origin';
/** A fourth merchant, with a receiver of its own. */
const FOURTH_MERCHANT = 'mch_dispatch_fourth';
const SECRET = `whsec_${Buffer.from('current secret 24 bytes!').toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.from('previous secret 24 bytes').toString('base64')}`;
const PAN = '4111111111111111';
/** 60 s: longer than any test, so a delivery seen in a test did not come from the poll. */
const NO_POLL_MS = 60_000;

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Responder = (request: Received, response: http.ServerResponse) => void;

/** A real merchant endpoint on 127.0.0.1; `received(n)` resolves once n requests have arrived. */
class Receiver {
  readonly requests: Received[] = [];
  respond: Responder = (_request, response) => response.end('ok');
  #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      this.requests.push(request);
      this.respond(request, res);
      for (const waiter of [...this.#waiters].filter((w) => this.requests.length >= w.count)) {
        this.#waiters.delete(waiter);
        waiter.resolve([...this.requests]);
      }
    });
  });
  #waiters = new Set<{ count: number; resolve(requests: Received[]): void }>();
  port = 0;

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  received(count: number): Promise<Received[]> {
    if (this.requests.length >= count) return Promise.resolve([...this.requests]);
    return new Promise((resolve) => this.#waiters.add({ count, resolve }));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A port nothing listens on (for a receiver that is down), free to listen on later. */
async function closedPort(): Promise<number> {
  const probe = await new Receiver().listen();
  await probe.close();
  return probe.port;
}

/** A promise with its resolver, for turning a callback into an awaited event. */
function signal<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function insertMerchants(db: Db): Promise<void> {
  for (const [id, name] of [
    [MERCHANT, 'Dispatch test shop'],
    [OTHER_MERCHANT, 'Another dispatch test shop'],
    [SAME_ORIGIN_MERCHANT, 'A dispatch test shop on the same endpoint'],
    [FOURTH_MERCHANT, 'A fourth dispatch test shop'],
  ] as const) {
    await insertMerchantRow(db, id, {
      name,
      credential_types: '["PAN"]',
      credentials_approved_at: 1,
      authorization_mode: 'merchant',
    });
  }
}

/** The payload carries a card number, as PAYMENT_CREDENTIALS does; it must never reach the tables. */
function payloadOf(message: MessageForPayload): unknown {
  return {
    eventName: message.eventName,
    merchantId: message.merchantId,
    credentials: [{ type: 'PAN', pan: PAN, expirationMonth: '09', expirationYear: '2031' }],
    subjectId: message.subjectId,
  };
}

/** A Sender with one connection to each receiver, so that attempts queue behind a slow one. */
function oneConnectionSender(timeoutMs: number): Sender {
  return new Sender({
    destinations: new WebhookDestinations('staging', { loopback: true }),
    timeoutMs,
    connectionsPerOrigin: 1,
    payloads: { build: async (message) => payloadOf(message) },
  });
}

describe.each(engines())('dispatcher on %s', (engine) => {
  let db: Db;
  let databaseUrl: string;
  let drop: () => Promise<void>;
  const log = createLogger(process.env.WH_LOG ?? 'silent');
  const open: Array<{ stop(): Promise<unknown> } | { close(): Promise<void> }> = [];

  beforeAll(async () => {
    const database = await testDatabase(engine);
    databaseUrl = database.url;
    drop = database.drop;
    db = createDb(databaseUrl);
    await migrate(db);
    await insertMerchants(db);
  });
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) {
      await ('stop' in thing ? thing.stop() : thing.close());
    }
    await db.kysely.deleteFrom('webhook_attempts').execute();
    await db.kysely.deleteFrom('webhook_messages').execute();
  });
  afterAll(async () => {
    await db.close();
    await drop();
  });

  function dispatcher(
    endpoint: WebhookEndpoint | DispatcherOptions['endpoints'],
    options: Partial<DispatcherOptions> = {},
  ): Dispatcher {
    const instance = new Dispatcher({
      db,
      log,
      destinations: new WebhookDestinations('staging', { loopback: true }),
      timeoutMs: 2_000,
      retryDelaysMs: { default: [50, 50, 100, 200, 400, 800], credentials: [50, 50, 100, 200, 400, 800] },
      endpoints: 'resolve' in endpoint ? endpoint : { resolve: async () => endpoint },
      payloads: { build: async (message) => payloadOf(message) },
      pollIntervalMs: NO_POLL_MS,
      ...options,
    });
    open.push(instance);
    return instance;
  }

  async function receiver(port?: number): Promise<Receiver> {
    const instance = await new Receiver().listen(port);
    open.push(instance);
    return instance;
  }

  /** Inserts messages the way a domain service does and returns their rows. */
  async function outbox(
    count: number,
    leaseMs: number,
    schedule: 'credentials' | 'default' = 'credentials',
    merchantId = MERCHANT,
  ) {
    const rows = Array.from({ length: count }, (_, i) =>
      newMessage(
        { merchantId, eventName: 'PAYMENT_CREDENTIALS', subjectId: `crq_${i}`, schedule },
        Date.now(),
        leaseMs,
      ),
    );
    await db.kysely.transaction().execute((trx) => insertMessages(trx, rows));
    return rows;
  }

  const repo = () => new WebhookRepo(db);

  /** The messages read back once every one of them is DELIVERED. */
  function allDelivered(rows: readonly { id: string }[]) {
    return until(async () => {
      const messages = await Promise.all(rows.map((row) => repo().get(MERCHANT, row.id)));
      return messages.every((message) => message.state === 'DELIVERED') && messages;
    }, 15_000);
  }

  /** Resolves once the first attempt at the message is recorded. */
  function attempted(id: string) {
    return until(async () => (await repo().get(MERCHANT, id)).attemptCount > 0);
  }

  /**
   * Starts `sender`, commits one message to it, waits for `reached` (by default, its first attempt
   * recorded), stops it and reads the message back.
   */
  async function firstAttempt(sender: Dispatcher, reached?: Promise<unknown>) {
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id as string;
    sender.committed(rows);
    await (reached ?? attempted(id));
    await sender.stop();
    return repo().get(MERCHANT, id);
  }

  it('delivers a committed message at once, signed so that standardwebhooks verifies it', async () => {
    const hooks = await receiver();
    const sender = dispatcher({ url: hooks.url('/hooks?shop=1'), secrets: [SECRET] });
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id;
    sender.committed(rows);

    const [request] = await hooks.received(1);
    if (!request) throw new Error('no request');
    expect(request.path).toBe('/hooks?shop=1');
    expect(request.headers['webhook-id']).toBe(id);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('WalletCheckout-Webhooks/1');
    const verified = new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>);
    expect(verified).toMatchObject({ eventName: 'PAYMENT_CREDENTIALS', merchantId: MERCHANT });

    await sender.stop();
    const message = await repo().get(MERCHANT, id as string);
    expect(message).toMatchObject({ state: 'DELIVERED', attemptCount: 1, lastError: null });
    expect(message.attempts).toEqual([
      {
        id: expect.stringMatching(/^atm_/),
        attemptedAt: expect.any(Number),
        statusCode: 200,
        latencyMs: expect.any(Number),
        error: null,
      },
    ]);
  });

  it('signs with both secrets during a rotation, and each one verifies', async () => {
    const hooks = await receiver();
    const sender = dispatcher({ url: hooks.url(), secrets: [SECRET, OLD_SECRET] });
    await sender.start();
    sender.committed(await outbox(1, sender.leaseMs));
    const [request] = await hooks.received(1);
    const headers = request?.headers as Record<string, string>;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of [SECRET, OLD_SECRET]) {
      expect(new Webhook(secret).verify(request?.body ?? '', headers)).toBeTruthy();
    }
  });

  it('retries a 500 with the same webhook-id and body, then records DELIVERED after two attempts', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => {
      response.statusCode = hooks.requests.length === 1 ? 500 : 200;
      response.end();
    };
    const sender = dispatcher({ url: hooks.url(), secrets: [SECRET] });
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id;
    sender.committed(rows);

    const [first, second] = await hooks.received(2);
    expect(second?.headers['webhook-id']).toBe(id);
    expect(first?.headers['webhook-id']).toBe(id);
    expect(second?.body).toBe(first?.body);

    await sender.stop();
    const message = await repo().get(MERCHANT, id as string);
    expect(message).toMatchObject({ state: 'DELIVERED', attemptCount: 2, lastError: null });
    expect(message.attempts.map((a) => [a.statusCode, a.error])).toEqual([
      [500, 'HTTP 500'],
      [200, null],
    ]);
  });

  it('keeps the card data of the payload out of every stored row', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => {
      response.statusCode = 500;
      response.end(`rejected ${PAN}`);
    };
    const sender = dispatcher(
      { url: hooks.url(), secrets: [SECRET] },
      { retryDelaysMs: { default: [], credentials: [] } },
    );
    await sender.start();
    sender.committed(await outbox(1, sender.leaseMs));
    const [request] = await hooks.received(1);
    expect(request?.body).toContain(PAN);
    await sender.stop();
    const stored = JSON.stringify([
      await db.kysely.selectFrom('webhook_messages').selectAll().execute(),
      await db.kysely.selectFrom('webhook_attempts').selectAll().execute(),
    ]);
    expect(stored).not.toContain(PAN);
  });

  it('gets the message to a receiver that was down once it is up', async () => {
    const port = await closedPort();
    const firstAttemptFailed = signal();
    let lookups = 0;
    const sender = dispatcher({
      resolve: async () => {
        // The second lookup comes after the first attempt has failed.
        if (++lookups === 2) firstAttemptFailed.resolve();
        return { url: `http://127.0.0.1:${port}/hooks`, secrets: [SECRET] };
      },
    });
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id;
    sender.committed(rows);

    await firstAttemptFailed.promise;
    const hooks = await receiver(port);
    await hooks.received(1);
    await sender.stop();
    const message = await repo().get(MERCHANT, id as string);
    expect(message.state).toBe('DELIVERED');
    expect(message.attempts[0]).toMatchObject({
      statusCode: null,
      error: "ECONNREFUSED: connect to the webhook URL's host failed",
    });
    expect(message.attempts.at(-1)).toMatchObject({ statusCode: 200, error: null });
  });

  it('counts a receiver that does not answer in time as a failure', async () => {
    const hooks = await receiver();
    hooks.respond = () => undefined;
    const sender = dispatcher(
      { url: hooks.url(), secrets: [SECRET] },
      { timeoutMs: 200, retryDelaysMs: { default: [], credentials: [] } },
    );
    const message = await firstAttempt(sender, hooks.received(1));
    expect(message).toMatchObject({ state: 'FAILED', lastError: 'No complete response within 200 ms.' });
    expect(message.attempts[0]?.latencyMs).toBeGreaterThanOrEqual(190);
    expect(message.attempts[0]?.latencyMs).toBeLessThan(800);
  });

  it('does not follow a redirect: a 302 is a failed attempt', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => {
      response.writeHead(302, { location: hooks.url('/elsewhere') });
      response.end();
    };
    const sender = dispatcher(
      { url: hooks.url(), secrets: [SECRET] },
      { retryDelaysMs: { default: [], credentials: [] } },
    );
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id;
    sender.committed(rows);
    await hooks.received(1);
    await sender.stop();
    expect(hooks.requests.map((r) => r.path)).toEqual(['/hooks']);
    const message = await repo().get(MERCHANT, id as string);
    expect(message.state).toBe('FAILED');
    expect(message.attempts[0]).toMatchObject({
      statusCode: 302,
      error: expect.stringMatching(/^HTTP 302: redirects/),
    });
  });

  it('marks a message FAILED when the schedule is exhausted, and a resend delivers it', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => {
      response.statusCode = 503;
      response.end();
    };
    const delays = { default: [], credentials: [20, 20] };
    const first = dispatcher({ url: hooks.url(), secrets: [SECRET] }, { retryDelaysMs: delays });
    await first.start();
    const rows = await outbox(1, first.leaseMs);
    const id = rows[0]?.id;
    first.committed(rows);
    await hooks.received(3);
    await first.stop();
    const failed = await repo().get(MERCHANT, id as string);
    expect(failed).toMatchObject({ state: 'FAILED', attemptCount: 3, lastError: 'HTTP 503' });
    expect(failed.attempts).toHaveLength(3);

    hooks.respond = (_request, response) => response.end();
    const second = dispatcher({ url: hooks.url(), secrets: [SECRET] }, { retryDelaysMs: delays });
    await second.start();
    const webhooks = new Webhooks({ db, dispatcher: second });
    expect(await webhooks.resend(MERCHANT, id as string, TEST_ACTOR)).toMatchObject({
      state: 'PENDING',
      attemptCount: 0,
    });
    const requests = await hooks.received(4);
    expect(requests[3]?.headers['webhook-id']).toBe(id);
    await second.stop();
    const delivered = await webhooks.get(MERCHANT, id as string);
    expect(delivered).toMatchObject({ state: 'DELIVERED', attemptCount: 1, lastError: null });
    expect(delivered.attempts).toHaveLength(4);
    expect((await webhooks.states([id as string])).get(id as string)).toBe('DELIVERED');
  });

  it('records a merchant without a webhook URL as a failed attempt that follows the schedule', async () => {
    const sender = dispatcher(
      { url: null, secrets: [SECRET] },
      { retryDelaysMs: { default: [], credentials: [60_000] } },
    );
    const message = await firstAttempt(sender);
    expect(message).toMatchObject({
      state: 'PENDING',
      attemptCount: 1,
      lastError: 'The merchant has no webhook URL configured.',
    });
    expect(message.nextAttemptAt - message.updatedAt).toBeGreaterThanOrEqual(48_000);
  });

  it('records a payload builder that throws as a failed attempt, with card data scrubbed', async () => {
    const hooks = await receiver();
    const built = signal();
    const sender = dispatcher(
      { url: hooks.url(), secrets: [SECRET] },
      {
        retryDelaysMs: { default: [], credentials: [] },
        payloads: {
          build: async () => {
            built.resolve();
            throw new Error(`card ${PAN} is no longer in the vault`);
          },
        },
      },
    );
    await sender.start();
    const rows = await outbox(1, sender.leaseMs);
    const id = rows[0]?.id;
    sender.committed(rows);
    await built.promise;
    await sender.stop();
    expect(hooks.requests).toHaveLength(0);
    const message = await repo().get(MERCHANT, id as string);
    expect(message).toMatchObject({
      state: 'FAILED',
      lastError:
        'The PAYMENT_CREDENTIALS payload could not be built: card [card-number] is no longer in the vault',
    });
  });

  it('records an event without a payload builder as a failed attempt', async () => {
    const built = signal();
    const sender = dispatcher(
      { url: 'http://127.0.0.1:9/hooks', secrets: [SECRET] },
      {
        retryDelaysMs: { default: [], credentials: [] },
        payloads: {
          build: async () => {
            built.resolve();
            return undefined;
          },
        },
      },
    );
    const message = await firstAttempt(sender, built.promise);
    expect(message).toMatchObject({
      state: 'FAILED',
      lastError: 'No payload is built for PAYMENT_CREDENTIALS.',
    });
    expect(message.attempts[0]).toMatchObject({ statusCode: null, latencyMs: 0 });
  });

  it('hands back at stop the messages it had not started, and tells so after the attempt under way ends', async () => {
    const hooks = await receiver();
    // Never answered: the attempt under way ends by its time-out.
    hooks.respond = () => {};
    const sender = dispatcher({ url: hooks.url(), secrets: [SECRET] }, { perReceiver: 1, timeoutMs: 300 });
    await sender.start();
    const rows = await outbox(3, sender.leaseMs);
    sender.committed(rows);
    const [request] = await hooks.received(1);
    expect(await sender.stop()).toEqual({ handedBack: 2, attemptsFinished: 1 });
    const started = request?.headers['webhook-id'];
    const stored = await Promise.all(rows.map((row) => repo().get(MERCHANT, row.id)));
    expect(Object.fromEntries(stored.map((message) => [message.id, message.attemptCount]))).toEqual(
      Object.fromEntries(rows.map((row) => [row.id, row.id === started ? 1 : 0])),
    );
    // The two handed back are due to any process now, not when this one's lease would have run out.
    const leases = await db.kysely.selectFrom('webhook_messages').select(['id', 'lease_until']).execute();
    for (const row of leases.filter((lease) => lease.id !== started)) {
      expect(Number(row.lease_until)).toBeLessThanOrEqual(Date.now());
    }
  });

  it('delivers, from its poll, a message leased by a process that crashed', async () => {
    const hooks = await receiver();
    const id = (await outbox(1, 30_000))[0]?.id;
    // The crashed process took the message a minute ago and never wrote a result.
    await db.kysely
      .updateTable('webhook_messages')
      .set({ lease_until: Date.now() - 1, next_attempt_at: Date.now() - 60_000 })
      .where('id', '=', id as string)
      .execute();
    const survivor = dispatcher({ url: hooks.url(), secrets: [SECRET] });
    await survivor.start();
    const [request] = await hooks.received(1);
    expect(request?.headers['webhook-id']).toBe(id);
    await survivor.stop();
    expect((await repo().get(MERCHANT, id as string)).state).toBe('DELIVERED');
  });

  /**
   * With a lease of 200 ms and polls every 50 ms, one message goes to `hooks` once and is DELIVERED with
   * one attempt, whatever the process's own polls claimed meanwhile.
   */
  async function expectSentOnce(hooks: Receiver): Promise<void> {
    const sender = dispatcher({ url: hooks.url(), secrets: [SECRET] }, { leaseMs: 200, pollIntervalMs: 50 });
    await sender.start();
    const id = (await outbox(1, 0))[0]?.id as string;
    await hooks.received(1);
    const delivered = await until(async () => {
      const message = await repo().get(MERCHANT, id);
      return message.state === 'DELIVERED' && message;
    });
    expect(delivered.attemptCount).toBe(1);
    expect(delivered.attempts).toHaveLength(1);
    expect(hooks.requests).toHaveLength(1);
  }

  it('records the result of an attempt that outlasts its lease, and sends it once', async () => {
    const hooks = await receiver();
    // The answer comes after the lease ran out and after the process's own polls claimed the message again.
    hooks.respond = (_request, response) => void setTimeout(() => response.end('ok'), 600);
    await expectSentOnce(hooks);
  });

  it('records the result of an attempt whose lease runs out while the result is written, and sends it once', async () => {
    const hooks = await receiver();
    // The first result's write takes longer than the lease, as on a loaded machine: meanwhile the
    // process's own polls find the lease run out.
    const record = WebhookRepo.prototype.recordResults;
    let slowed = false;
    WebhookRepo.prototype.recordResults = async function (this: WebhookRepo, results) {
      if (!slowed) {
        slowed = true;
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      return record.call(this, results);
    };
    try {
      await expectSentOnce(hooks);
      expect(slowed).toBe(true);
    } finally {
      WebhookRepo.prototype.recordResults = record;
    }
  });

  it('sends a resent message again though a stalled process still holds its earlier attempt', async () => {
    const hooks = await receiver();
    const stalled: http.ServerResponse[] = [];
    hooks.respond = (_request, response) => {
      if (stalled.length === 0) stalled.push(response);
      else response.end('ok');
    };
    const endpoint = { url: hooks.url(), secrets: [SECRET] };
    // The first process's attempt outlasts its lease, and it does not poll meanwhile (a stall).
    const first = dispatcher(endpoint, { leaseMs: 200, timeoutMs: 10_000 });
    await first.start();
    const rows = await outbox(1, first.leaseMs);
    const id = rows[0]?.id as string;
    first.committed(rows);
    await hooks.received(1);
    // A second process takes the message over once the lease has run out, and delivers it.
    const second = dispatcher(endpoint, { pollIntervalMs: 50 });
    await second.start();
    await hooks.received(2);
    await until(async () => (await repo().get(MERCHANT, id)).state === 'DELIVERED');
    await second.stop();
    await repo().resend(MERCHANT, id, Date.now());
    // The first process claims the resent message while its own earlier attempt is still under way.
    first.wake();
    await hooks.received(3);
    stalled[0]?.end('ok');
    const settled = await until(async () => {
      const message = await repo().get(MERCHANT, id);
      return message.state === 'DELIVERED' && message.attempts.length === 3 && message;
    });
    expect(settled.attemptCount).toBe(1);
  });

  it('sends nothing that waited for a connection past its lease, so a second process never sends it too', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => void setTimeout(() => response.end('ok'), 600);
    // One connection per process, 1 s to answer, a lease of 1.4 s: a request must leave within 200 ms
    // of the lease's start. The first process holds three messages; only the second one polls.
    const endpoint = { url: hooks.url(), secrets: [SECRET] };
    const options = { timeoutMs: 1_000, leaseMs: 1_400 };
    const first = dispatcher(endpoint, { ...options, sender: oneConnectionSender(1_000) });
    const second = dispatcher(endpoint, {
      ...options,
      sender: oneConnectionSender(1_000),
      pollIntervalMs: 50,
    });
    await first.start();
    const rows = await outbox(3, first.leaseMs);
    first.committed(rows);
    await second.start();
    const stored = await allDelivered(rows);
    // Sent anyway, the third would still be under way when its lease ran out and the second process took it.
    expect(hooks.requests.map((request) => request.headers['webhook-id']).sort()).toEqual(
      rows.map((row) => row.id).sort(),
    );
    expect(stored.map((message) => message.attempts.length)).toEqual([1, 1, 1]);
  });

  it('gives back at once what a slow receiver kept it from sending, so nothing waits for its lease to run out', async () => {
    const hooks = await receiver();
    hooks.respond = (_request, response) => void setTimeout(() => response.end('ok'), 400);
    // One connection, 400 ms an answer, a lease of 5 s with 750 ms to answer: a request must leave within
    // 2.125 s of the lease's start, so the first process sends six of ten and lets four go. Given back
    // then, they are sent (by either process) well before the first lease would have run out.
    const endpoint = { url: hooks.url(), secrets: [SECRET] };
    const options = { timeoutMs: 750, leaseMs: 5_000 };
    const first = dispatcher(endpoint, { ...options, sender: oneConnectionSender(750) });
    const second = dispatcher(endpoint, { ...options, pollIntervalMs: 50 });
    await first.start();
    await second.start();
    const committedAt = Date.now();
    const rows = await outbox(10, first.leaseMs);
    first.committed(rows);
    const stored = await allDelivered(rows);
    expect(new Set(hooks.requests.map((request) => request.headers['webhook-id'])).size).toBe(10);
    expect(hooks.requests).toHaveLength(10);
    const attempts = stored.flatMap((message) => message.attempts);
    expect(attempts).toHaveLength(10);
    const lastSent = Math.max(...attempts.map((attempt) => attempt.attemptedAt));
    expect(lastSent - committedAt).toBeLessThan(first.leaseMs);
  });

  describe('a receiver that hangs holds at most its share of the delivery slots', () => {
    /** A receiver that takes requests and answers none until `release()`. */
    async function stuckReceiver() {
      const stuck = await receiver();
      const unanswered: http.ServerResponse[] = [];
      stuck.respond = (_request, response) => unanswered.push(response);
      const release = () => {
        stuck.respond = (_request, response) => response.end('ok');
        for (const response of unanswered.splice(0)) response.end('ok');
      };
      return { stuck, release };
    }

    /** A dispatcher that finds each merchant's webhook at the URL given for it, with 30 s to answer. */
    function dispatcherFor(urls: Record<string, string>, options: Partial<DispatcherOptions>) {
      return dispatcher(
        { resolve: async (merchantId) => ({ url: urls[merchantId] ?? null, secrets: [SECRET] }) },
        { timeoutMs: 30_000, ...options },
      );
    }

    /**
     * MERCHANT's receiver is stuck; SAME_ORIGIN_MERCHANT's URL is another path on it. OTHER_MERCHANT's
     * receiver answers at once.
     */
    async function twoReceivers() {
      const { stuck, release } = await stuckReceiver();
      const hooks = await receiver();
      const sender = dispatcherFor(
        {
          [MERCHANT]: stuck.url('/hooks'),
          [SAME_ORIGIN_MERCHANT]: stuck.url('/platform/hooks?account=2'),
          [OTHER_MERCHANT]: hooks.url(),
        },
        { concurrency: 4, perReceiver: 2 },
      );
      return { stuck, hooks, sender, release };
    }

    /** Resolves once every message of each merchant given is DELIVERED. */
    function delivered(byMerchant: Record<string, string[]>) {
      return until(async () => {
        for (const [merchantId, ids] of Object.entries(byMerchant)) {
          for (const id of ids) if ((await repo().get(merchantId, id)).state !== 'DELIVERED') return false;
        }
        return true;
      });
    }

    /** Makes messages due a while ago: before any that are due now, so claims meet them first. */
    async function dueAgo(ids: string[], ms: number) {
      await db.kysely
        .updateTable('webhook_messages')
        .set({ next_attempt_at: Date.now() - ms })
        .where('id', 'in', ids)
        .execute();
    }

    /** OTHER_MERCHANT's messages arrive while the stuck receiver still holds only its share of 2. */
    async function othersGetThrough(parts: { stuck: Receiver; hooks: Receiver }, otherIds: string[]) {
      await parts.hooks.received(otherIds.length);
      await delivered({ [OTHER_MERCHANT]: otherIds });
      expect(parts.stuck.requests).toHaveLength(2);
    }

    const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

    it("delivers another merchant's committed messages while the stuck one's wait their turn", async () => {
      const { sender, release, ...parts } = await twoReceivers();
      await sender.start();
      const stuckRows = await outbox(10, sender.leaseMs);
      sender.committed(stuckRows);
      await parts.stuck.received(2);
      const otherRows = await outbox(3, sender.leaseMs, 'credentials', OTHER_MERCHANT);
      sender.committed(otherRows);
      await othersGetThrough(parts, ids(otherRows));

      release();
      await delivered({ [MERCHANT]: ids(stuckRows) });
      expect(new Set(parts.stuck.requests.map((request) => request.headers['webhook-id']))).toEqual(
        new Set(ids(stuckRows)),
      );
      expect(parts.stuck.requests).toHaveLength(10);
    });

    it('counts merchants whose URLs share an origin against one share', async () => {
      const { sender, release, ...parts } = await twoReceivers();
      await sender.start();
      const stuckRows = await outbox(5, sender.leaseMs);
      const sameOriginRows = await outbox(5, sender.leaseMs, 'credentials', SAME_ORIGIN_MERCHANT);
      sender.committed([...stuckRows, ...sameOriginRows]);
      await parts.stuck.received(2);
      const otherRows = await outbox(3, sender.leaseMs, 'credentials', OTHER_MERCHANT);
      sender.committed(otherRows);
      await othersGetThrough(parts, ids(otherRows));

      release();
      await delivered({ [MERCHANT]: ids(stuckRows), [SAME_ORIGIN_MERCHANT]: ids(sameOriginRows) });
      const platform = parts.stuck.requests.filter((request) => request.path.startsWith('/platform/'));
      expect(platform).toHaveLength(5);
    });

    it.each([
      ["the stuck merchant's due messages", [MERCHANT]],
      ['every merchant waiting on the hanging origin', [MERCHANT, SAME_ORIGIN_MERCHANT]],
    ])('claims past %s to reach another receiver', async (_case, merchants) => {
      const { sender, release, ...parts } = await twoReceivers();
      // Twenty messages of each merchant on the hanging origin fell due first: more than the process has
      // room to hold.
      const stuck: Record<string, string[]> = {};
      for (const [i, merchantId] of merchants.entries()) {
        const stuckIds = ids(await outbox(20, 0, 'credentials', merchantId));
        await dueAgo(stuckIds, 60_000 - i * 10_000);
        stuck[merchantId] = stuckIds;
      }
      const otherIds = ids(await outbox(3, 0, 'credentials', OTHER_MERCHANT));
      await sender.start();
      await othersGetThrough(parts, otherIds);

      release();
      sender.wake();
      await delivered(stuck);
      expect(parts.stuck.requests).toHaveLength(20 * merchants.length);
    });

    it('keeps slots for the other receivers while two hang at once', async () => {
      const first = await stuckReceiver();
      const second = await stuckReceiver();
      const hooks = await receiver();
      // A share of 4 each would give the two hanging receivers every slot between them.
      const sender = dispatcherFor(
        {
          [MERCHANT]: first.stuck.url(),
          [FOURTH_MERCHANT]: second.stuck.url(),
          [OTHER_MERCHANT]: hooks.url(),
        },
        { concurrency: 8, perReceiver: 4, perSlowReceiver: 2 },
      );
      await sender.start();
      const stuckRows = await outbox(10, sender.leaseMs);
      const fourthRows = await outbox(10, sender.leaseMs, 'credentials', FOURTH_MERCHANT);
      sender.committed([...stuckRows, ...fourthRows]);
      await Promise.all([first.stuck.received(2), second.stuck.received(2)]);
      const otherRows = await outbox(3, sender.leaseMs, 'credentials', OTHER_MERCHANT);
      sender.committed(otherRows);
      await delivered({ [OTHER_MERCHANT]: ids(otherRows) });
      expect(first.stuck.requests.length + second.stuck.requests.length).toBeLessThanOrEqual(6);

      first.release();
      second.release();
      await delivered({ [MERCHANT]: ids(stuckRows), [FOURTH_MERCHANT]: ids(fourthRows) });
      expect(first.stuck.requests).toHaveLength(10);
      expect(second.stuck.requests).toHaveLength(10);
    });
  });

  it('gives a receiver whose attempts time out a share of one until it answers again (fake sender)', async () => {
    // The boundary faked: attempts end when the test says, with the outcome it gives.
    const pending: Array<(outcome: AttemptOutcome) => void> = [];
    const sender: AttemptSender = {
      async start() {},
      attempt: () => new Promise<AttemptOutcome>((resolve) => pending.push(resolve)),
      async close() {},
    };
    const timedOut: AttemptOutcome = {
      statusCode: null,
      latencyMs: 2_000,
      error: 'No complete response within 2000 ms.',
      timedOut: true,
    };
    const answered: AttemptOutcome = { statusCode: 200, latencyMs: 1, error: null, timedOut: false };
    const instance = dispatcher(
      { url: 'http://127.0.0.1:9/hooks', secrets: [SECRET] },
      { sender, concurrency: 8, perReceiver: 4, perSlowReceiver: 1, pollIntervalMs: 50 },
    );
    await instance.start();
    const rows = await outbox(10, instance.leaseMs);
    instance.committed(rows);
    try {
      await until(async () => pending.length === 4);

      // All four time out: from then on the receiver gets one attempt at a time, retries included.
      for (const end of pending.splice(0)) end(timedOut);
      for (let round = 0; round < 6; round++) {
        await until(async () => pending.length > 0);
        expect(pending, `round ${round + 1}`).toHaveLength(1);
        (pending.shift() as (outcome: AttemptOutcome) => void)(timedOut);
      }

      // It answers: the whole share again, and everything is delivered.
      await until(async () => pending.length > 0);
      (pending.shift() as (outcome: AttemptOutcome) => void)(answered);
      await until(async () => pending.length > 1);
      const ids = rows.map((row) => row.id);
      await until(async () => {
        for (const end of pending.splice(0)) end(answered);
        const states = await Promise.all(ids.map(async (id) => (await repo().get(MERCHANT, id)).state));
        return states.every((state) => state === 'DELIVERED');
      });
    } finally {
      // Whatever happened, no attempt is left hanging for the dispatcher's stop to wait on.
      for (const end of pending.splice(0)) end(answered);
    }
  });

  it('refuses in production to deliver to a loopback address: the receiver sees nothing', async () => {
    const hooks = await receiver();
    const sender = dispatcher(
      { url: `https://127.0.0.1:${hooks.port}/hooks`, secrets: [SECRET] },
      {
        destinations: new WebhookDestinations('production', { loopback: false }),
        retryDelaysMs: { default: [], credentials: [] },
      },
    );
    const message = await firstAttempt(sender);
    expect(hooks.requests).toHaveLength(0);
    expect(message.state).toBe('FAILED');
    expect(message.lastError).toMatch(/127\.0\.0\.1 is a loopback address/);
  });

  it('refuses in production a plain http URL', async () => {
    const sender = dispatcher(
      { url: 'http://shop.example.com/hooks', secrets: [SECRET] },
      {
        destinations: new WebhookDestinations('production', { loopback: false }),
        retryDelaysMs: { default: [], credentials: [] },
      },
    );
    expect((await firstAttempt(sender)).lastError).toMatch(/https in production/);
  });

  it('never delivers one message twice with two processes on one database', async () => {
    const hooks = await receiver();
    const count = 200;
    const ids = (await outbox(count, 0, 'default')).map((row) => row.id);
    const processes = [0, 1].map(() => {
      const processDb = createDb(databaseUrl);
      open.push({ close: () => processDb.close() });
      const process = new Dispatcher({
        db: processDb,
        log,
        destinations: new WebhookDestinations('staging', { loopback: true }),
        timeoutMs: 2_000,
        retryDelaysMs: { default: [50], credentials: [50] },
        endpoints: { resolve: async () => ({ url: hooks.url(), secrets: [SECRET] }) },
        payloads: { build: async (message) => payloadOf(message) },
        pollIntervalMs: NO_POLL_MS,
        concurrency: 8,
      });
      open.push(process);
      return process;
    });
    await Promise.all(processes.map((p) => p.start()));
    await hooks.received(count);
    await Promise.all(processes.map((p) => p.stop()));

    const seen = hooks.requests.map((r) => r.headers['webhook-id']);
    expect(new Set(seen).size).toBe(count);
    expect(seen).toHaveLength(count);
    const states = await repo().states(ids);
    expect([...states.values()].every((state) => state === 'DELIVERED')).toBe(true);
  });

  it('leases new messages only while it runs: those of an API-only process go to any dispatcher', async () => {
    const hooks = await receiver();
    const apiProcess = dispatcher({ url: hooks.url(), secrets: [SECRET] });
    expect(apiProcess.leaseForNew()).toBe(0);
    const rows = await outbox(1, apiProcess.leaseForNew());
    apiProcess.committed(rows);
    const deliverer = dispatcher({ url: hooks.url(), secrets: [SECRET] });
    await deliverer.start();
    expect(deliverer.leaseForNew()).toBe(deliverer.leaseMs);
    const [request] = await hooks.received(1);
    expect(request?.headers['webhook-id']).toBe(rows[0]?.id);
    await deliverer.stop();
    expect(deliverer.leaseForNew()).toBe(0);
  });

  // PostgreSQL only: SQLite has one writer per file, so there is no concurrent claim to race.
  if (engine === 'postgres')
    it('wakes another process through NOTIFY when this one does not deliver', async () => {
      const hooks = await receiver();
      const worker = dispatcher({ url: hooks.url(), secrets: [SECRET] });
      await worker.start();
      // An API-only process: it writes the outbox row but runs no dispatcher of its own.
      const apiProcess = dispatcher({ url: hooks.url(), secrets: [SECRET] });
      const rows = await outbox(1, apiProcess.leaseForNew());
      const id = rows[0]?.id;
      apiProcess.committed(rows);
      const [request] = await hooks.received(1);
      expect(request?.headers['webhook-id']).toBe(id);
    });
});
