/**
 * A database that cannot be reached answers 503 SERVICE_UNAVAILABLE with Retry-After, never the driver's
 * message, and a request refused so can be sent again with its Idempotency-Key once the database is back.
 * PostgreSQL is reached through a TCP relay the test closes, as a stopped server or a cut link is; SQLite
 * through a second connection that holds the write lock beyond the service's busy timeout.
 */
import net from 'node:net';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type TestDatabase, testDatabase } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';

const ORIGIN = 'https://shop.example';

/**
 * A TCP relay to `target`: `cut()` drops its connections and refuses new ones until `restore()`;
 * `stall()` drops them and accepts new ones that never get an answer, as a host that stopped answering.
 */
async function startRelay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let stalled = false;
  const relay = net.createServer((client) => {
    if (stalled) {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      relay.once('error', reject);
      relay.listen(port, '127.0.0.1', () => {
        relay.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const { port } = relay.address() as net.AddressInfo;
  return {
    port,
    async cut() {
      const closed = new Promise((resolve) => relay.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    stall() {
      stalled = true;
      for (const socket of sockets) socket.destroy();
    },
    unstall() {
      stalled = false;
    },
    restore: () => listen(port),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      if (relay.listening) await new Promise((resolve) => relay.close(resolve));
    },
  };
}

/** What every answer of an unreachable database looks like: no host, port, file or driver text in it. */
function expectUnavailable(response: Awaited<ReturnType<TestService['call']>>, hidden: string[] = []): void {
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe('5');
  expect(response.json).toEqual({
    errorCode: 'SERVICE_UNAVAILABLE',
    errorMessage: 'The service cannot reach its database at the moment; try again in a few seconds.',
  });
  for (const text of hidden) expect(response.text).not.toContain(text);
}

/** The error-level log lines of answers given because the database could not be reached. */
function unavailableLogs(service: TestService): { level: number; err: { message: string; code?: string } }[] {
  return service.logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'the database could not be reached; answered 503');
}

const postgresUrl = inject('postgresUrl');

describe.runIf(postgresUrl)('a PostgreSQL server that cannot be reached, over HTTP', () => {
  let database: TestDatabase;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let service: TestService;
  let admin: pg.Client;
  let receiver: Receiver;
  let shop: Awaited<ReturnType<TestService['merchant']>>;
  let session: Awaited<ReturnType<TestService['session']>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    database = await testDatabase('postgres');
    const direct = new URL(database.url);
    relay = await startRelay({ host: direct.hostname, port: Number(direct.port) });
    const relayed = new URL(database.url);
    relayed.port = String(relay.port);
    service = await startTestService(
      'postgres',
      { WEBHOOK_WORKER: 'off' },
      { database: { ...database, url: relayed.toString() } },
    );
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    shop = await service.merchant({ allowedOrigins: [ORIGIN], webhookUrl: receiver.url });
    session = await service.session(shop.apiKey);
  });
  afterAll(async () => {
    await admin?.end();
    await service?.close();
    await relay?.close();
    await database?.drop();
    await receiver?.close();
  });

  it('answers 503 with Retry-After while the server is gone, and the same Idempotency-Key succeeds once it is back', async () => {
    const key = 'pg-outage-1';
    await relay.cut();
    const refused = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expectUnavailable(refused, ['127.0.0.1', String(relay.port), 'ECONNREFUSED', 'select']);
    const checkout = await service.call('POST', '/checkout/orders', {
      body: { merchantId: shop.merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: ORIGIN },
    });
    expectUnavailable(checkout);
    const health = await service.call('GET', '/healthz');
    expect([health.status, health.headers['retry-after'], health.json]).toEqual([
      503,
      '5',
      { errorCode: 'SERVICE_UNAVAILABLE', errorMessage: 'The database cannot be reached.' },
    ]);
    const logged = unavailableLogs(service);
    // The first of each kind of failure in full; those of the same kind that follow are counted.
    expect(logged.length).toBeGreaterThanOrEqual(1);
    expect(logged.every((line) => line.level === 50)).toBe(true);
    expect(logged.map((line) => line.err.code)).toContain('ECONNREFUSED');

    await relay.restore();
    const accepted = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expect(replayed.status).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json).toEqual(accepted.json);
  });

  it('answers 503 when the server ends the connection mid-query (57P01), and stays up to serve the retry', async () => {
    const key = 'pg-terminated-1';
    // The request's look-up of its key waits on this lock until its connection is ended under it.
    await admin.query('begin');
    await admin.query('lock table idempotency_keys in access exclusive mode');
    const pending = service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    const waiting = await until(async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
      );
      return rows[0];
    });
    await admin.query('select pg_terminate_backend($1)', [waiting.pid]);
    expectUnavailable(await pending, ['terminating connection', 'administrator']);
    expect(unavailableLogs(service).map((line) => line.err.code)).toContain('57P01');
    await admin.query('rollback');

    // The pool may lend the ended connection once more before it has read the end of it: that request
    // is a 503 too, and the next one gets a new connection.
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 3 && statuses.at(-1) !== 200; attempt++) {
      const retried = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session),
        headers: { 'idempotency-key': key },
      });
      if (retried.status === 503) expectUnavailable(retried);
      statuses.push(retried.status);
    }
    expect(statuses.at(-1)).toBe(200);
  });

  it('answers 503 once the connect time-out ends when the server accepts connections but never answers', async () => {
    const key = 'pg-silent-1';
    relay.stall();
    const timedOut = () =>
      unavailableLogs(service).some((line) => /connection timeout/.test(line.err.message));
    // The pool may first lend a connection the stall ended (a 503 at once); then it opens a new one, which
    // the relay accepts and never answers.
    for (let attempt = 0; attempt < 3 && !timedOut(); attempt++) {
      const refused = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session),
        headers: { 'idempotency-key': key },
      });
      expectUnavailable(refused);
    }
    relay.unstall();
    expect(timedOut()).toBe(true);
    const accepted = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expect(accepted.status).toBe(200);
  });
});

describe('a SQLite database locked by another connection beyond the busy timeout, over HTTP', () => {
  let service: TestService;
  let receiver: Receiver;
  let shop: Awaited<ReturnType<TestService['merchant']>>;
  let session: Awaited<ReturnType<TestService['session']>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    // No dispatcher: its claims would wait out the busy timeout too, each holding up the event loop 5 s.
    service = await startTestService('sqlite', { WEBHOOK_DISPATCH: 'off' });
    shop = await service.merchant({ webhookUrl: receiver.url });
    session = await service.session(shop.apiKey);
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  it('answers 503 with Retry-After (SQLITE_BUSY), and the same Idempotency-Key succeeds once the lock is gone', async () => {
    const key = 'sqlite-busy-1';
    const other = new SQLite(path.join(service.dataDir, 'wallet.db'));
    try {
      other.exec('begin exclusive');
      const refused = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session),
        headers: { 'idempotency-key': key },
      });
      expectUnavailable(refused, ['database is locked', 'wallet.db']);
      expect(unavailableLogs(service).map((line) => line.err.code)).toContain('SQLITE_BUSY');
    } finally {
      other.close();
    }
    const accepted = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expect(accepted.status).toBe(200);
    const replayed = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
      headers: { 'idempotency-key': key },
    });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  }, 60_000);

  it('answers 503 for a 4xx it cannot keep for its Idempotency-Key, and gives that 4xx to the retry', async () => {
    const key = 'sqlite-busy-2';
    const unconfigured = await service.merchant();
    const its = await service.session(unconfigured.apiKey);
    const other = new SQLite(path.join(service.dataDir, 'wallet.db'));
    try {
      other.exec('begin exclusive');
      const refused = await service.call('POST', '/payments/credentials', {
        apiKey: unconfigured.apiKey,
        body: credentialsBody(its),
        headers: { 'idempotency-key': key },
      });
      expectUnavailable(refused, ['database is locked']);
    } finally {
      other.close();
    }
    for (const replay of [undefined, 'true']) {
      const answered = await service.call('POST', '/payments/credentials', {
        apiKey: unconfigured.apiKey,
        body: credentialsBody(its),
        headers: { 'idempotency-key': key },
      });
      expect(answered.status).toBe(422);
      expect(answered.json.errorCode).toBe('WEBHOOK_URL_NOT_CONFIGURED');
      expect(answered.headers['idempotent-replayed']).toBe(replay);
    }
  }, 60_000);
});
