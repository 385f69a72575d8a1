import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from './db/index.js';
import { TEST_SHOPPER_EMAIL } from './sandbox/seed.js';
import { engines, type TestDatabase, testDatabase } from './test-support/db.js';
import { type GatewayProxy, startGatewayProxy } from './test-support/gateway-proxy.js';
import { startReceiver } from './test-support/receiver.js';
import { type SandboxGatewayServer, startSandboxGateway } from './test-support/sandbox-gateway.js';
import { credentialsBody, startTestService, type TestService } from './test-support/service.js';
import { until } from './test-support/wait.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs `serve` from the sources, sends `signal` once it listens, and tells how the process ended. */
async function serveUntil(
  signal: NodeJS.Signals,
  args: string[],
  env: Record<string, string>,
): Promise<Ended> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', ...args], {
    env: {
      ...process.env,
      ...env,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      // A delivery worker still starting keeps the process alive for a second or so after the signal, and
      // so would hide a stop that waits for something nothing else keeps alive (which ends with code 13).
      WEBHOOK_WORKER: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const ended = new Promise<Ended>((resolve) =>
    child.once('exit', (code, endSignal) => resolve({ code, signal: endSignal, stderr })),
  );
  // 20 s: starting and stopping take about two; a process that hangs is killed, and ends by SIGKILL.
  const hung = setTimeout(() => child.kill('SIGKILL'), 20_000);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      // Printed, as text or JSON, once the service listens.
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /(?:listening on |"url": ")(http:\/\/[\d.:]+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      void ended.then(() => reject(new Error(`the service ended before it listened: ${stderr}`)));
    });
    // The service answers: it is up, and its signal handlers were set before the URL was printed.
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    // 500 ms for the work that follows the start (staging data, the first outbox poll) to end: I/O still
    // in flight during the stop keeps the process alive, which too would hide the stop described above.
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill(signal);
    return await ended;
  } finally {
    clearTimeout(hung);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/**
 * The handles and requests that keep this process alive, counted by kind (TCPSocketWrap, Timeout…); not
 * the pipes of the test runner's output, which it opens at its first write.
 */
function aliveByKind(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind !== 'PipeWrap') counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/**
 * A clean stop ends with code 0: the service closes its sockets and its database, and the process then
 * exits, neither hanging nor ending with Node's 13 (a top-level await that nothing could settle).
 */
describe.each(engines())('serve stopped by a signal on %s', (engine) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await testDatabase(engine);
  });
  afterAll(async () => {
    await database.drop();
  });

  it.each([
    ['SIGTERM', ['--json']],
    ['SIGINT', []],
    ['SIGHUP', []],
  ] as const)('exits 0 after %s (arguments %j)', { timeout: 30_000 }, async (signal, args) => {
    const ended = await serveUntil(signal, [...args], {
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
    });
    expect({ code: ended.code, signal: ended.signal }).toEqual({ code: 0, signal: null });
    expect(ended.stderr).toContain(`${signal}: stopping`);
    expect(ended.stderr).not.toMatch(/error/i);
    if (engine === 'sqlite') {
      // SQLite removes the WAL when the last connection closes: the checkpoint worker's, then the main one.
      expect(fs.existsSync(`${database.url.slice('sqlite:'.length)}-wal`)).toBe(false);
    }
  });

  it('leaves nothing of its own keeping the process alive once it has stopped', {
    timeout: 30_000,
  }, async () => {
    const receiver = await startReceiver();
    try {
      const before = aliveByKind();
      const service = await startTestService(engine, {}, { database });
      const shop = await service.merchant({ webhookUrl: receiver.url });
      // Requests on several connections at once, so that the pool opens more than one.
      const sessions = await Promise.all([1, 2, 3, 4].map(() => service.session(shop.apiKey)));
      const answers = await Promise.all(
        sessions.map((session, i) =>
          service.call('POST', '/payments/credentials', {
            apiKey: shop.apiKey,
            body: credentialsBody(session, { merchantReference: `order-${i}` }),
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      await receiver.nth(4);
      await service.close();
      const left = [...aliveByKind()].filter(([kind, count]) => count > (before.get(kind) ?? 0));
      expect(left).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The connection it came on, and its end. */
  socket: Socket;
  socketClosed: Promise<unknown>;
}

/** One request through `agent` (kept-alive connections), read to its end. */
function send(agent: http.Agent, url: string, options: http.RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { ...options, agent }, (response) => {
      const socket = response.socket;
      const socketClosed = once(socket, 'close');
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body, socket, socketClosed }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

/**
 * A merchant's receiver that holds every request: it answers the test webhooks (POST /webhooks/test) with
 * 204 when told, and never answers the others, whose attempts end by their time-out.
 */
async function holdingReceiver() {
  const tests: http.ServerResponse[] = [];
  const waiters: { count: number; resolve(): void }[] = [];
  let received = 0;
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received += 1;
      if ((JSON.parse(body) as { eventName: string }).eventName === 'WEBHOOK_TEST') tests.push(response);
      for (const waiter of waiters.filter((w) => w.count <= received)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    /** Resolves once `count` requests have arrived in all. */
    received: (count: number) =>
      new Promise<void>((resolve) => {
        if (received >= count) resolve();
        else waiters.push({ count, resolve });
      }),
    answerTests() {
      for (const response of tests.splice(0)) response.writeHead(204).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The service's last log line, which tells what the stop did. */
function stopLine(logs: string[]): Record<string, unknown> | undefined {
  return logs
    .flatMap((chunk) => chunk.split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.msg === 'wallet checkout stopped');
}

/**
 * A load balancer keeps connections open to the service; stopping must neither reset one in the middle
 * of a request nor leave it open for the next request to fail on.
 */
describe.each(engines())(
  'the API stopping, seen by a client with kept-alive connections, on %s',
  (engine) => {
    let service: TestService;
    let agent: http.Agent;

    afterEach(() => {
      agent.destroy();
    });

    it('closes an idle connection at once, then refuses a new one', { timeout: 30_000 }, async () => {
      service = await startTestService(engine);
      agent = new http.Agent({ keepAlive: true });
      const first = await send(agent, `${service.url}/healthz`);
      expect(first.status).toBe(200);
      expect(first.headers.connection).toBe('keep-alive');

      await service.close();
      await first.socketClosed;
      // A fresh connection: the agent holds none open any more.
      await expect(send(agent, `${service.url}/healthz`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(stopLine(service.logs)).toEqual({
        level: 30,
        time: expect.any(Number),
        pid: expect.any(Number),
        hostname: expect.any(String),
        msg: 'wallet checkout stopped',
        requestsFinished: 0,
        requestsCut: 0,
        requestsStillRunning: 0,
        webhooksHandedBack: 0,
        webhookAttemptsFinished: 0,
        durationMs: expect.any(Number),
      });
    });

    it('resets no request of clients that keep their connections busy: each gets its answer, then a refusal', {
      timeout: 30_000,
    }, async () => {
      service = await startTestService(engine);
      agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      const failures: string[] = [];
      let answered = 0;
      let stopping = false;
      // Eight clients, each sending its next request the moment the last is answered, until refused.
      const client = async () => {
        for (;;) {
          try {
            const response = await send(agent, `${service.url}/healthz`);
            expect(response.status).toBe(200);
            answered += 1;
          } catch (error) {
            const { code } = error as { code?: string };
            if (!stopping || code !== 'ECONNREFUSED') failures.push(String(code ?? error));
            return;
          }
        }
      };
      const clients = Array.from({ length: 8 }, client);
      while (answered < 200) await new Promise((resolve) => setImmediate(resolve));
      stopping = true;
      await service.close();
      await Promise.all(clients);
      expect(failures).toEqual([]);
      expect(stopLine(service.logs)).toMatchObject({ requestsCut: 0 });
    });

    it('answers a request under way in full with Connection: close, and waits for the webhook attempt under way', {
      timeout: 30_000,
    }, async () => {
      service = await startTestService(engine);
      agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const receiver = await holdingReceiver();
      try {
        const shop = await service.merchant({ webhookUrl: receiver.url });
        // A PAYMENT_CREDENTIALS webhook on its way to the receiver, which never answers it.
        const session = await service.session(shop.apiKey);
        const acknowledged = await service.call('POST', '/payments/credentials', {
          apiKey: shop.apiKey,
          body: credentialsBody(session),
          headers: { 'idempotency-key': `stop-${engine}` },
        });
        expect(acknowledged.status, acknowledged.text).toBe(200);
        await receiver.received(1);

        const warm = await send(agent, `${service.url}/healthz`);
        // The test webhook waits for the receiver's answer, on the connection the agent kept open.
        const slow = send(agent, `${service.url}/webhooks/test`, {
          method: 'POST',
          headers: { authorization: `Bearer ${shop.apiKey}` },
        });
        await receiver.received(2);
        const stopped = service.close();
        receiver.answerTests();

        const answer = await slow;
        expect(answer.socket).toBe(warm.socket);
        expect(answer.status, answer.body).toBe(200);
        expect(answer.headers.connection).toBe('close');
        expect(JSON.parse(answer.body)).toMatchObject({ delivered: true, statusCode: 204 });
        await answer.socketClosed;
        await stopped;
        expect(stopLine(service.logs)).toMatchObject({
          level: 30,
          requestsFinished: 1,
          requestsCut: 0,
          webhooksHandedBack: 0,
          webhookAttemptsFinished: 1,
        });
      } finally {
        await receiver.close();
      }
    });
  },
);

/**
 * A checkout payment waiting on a slow gateway when the grace period ends: its connection is cut, but the
 * stop waits for it before closing the database, so the gateway's decision is recorded and the order
 * settles now, not at the next sweep for payments left under way.
 */
describe.each(engines())('a stop that cuts a payment waiting on the gateway, on %s', (engine) => {
  const SHOP = 'https://shop.example';
  let database: TestDatabase;
  let gateway: SandboxGatewayServer;
  let proxy: GatewayProxy;

  beforeAll(async () => {
    database = await testDatabase(engine);
    gateway = await startSandboxGateway();
    proxy = await startGatewayProxy(gateway.url);
  });
  afterAll(async () => {
    await proxy?.close();
    await gateway?.close();
    await database?.drop();
  });

  it('records the decision before the database closes', { timeout: 30_000 }, async () => {
    // The grace period, and the wait for the requests it cut, last WEBHOOK_TIMEOUT_MS each.
    const service = await startTestService(
      engine,
      { SANDBOX_GATEWAY_URL: proxy.url, WEBHOOK_TIMEOUT_MS: '3000' },
      { database },
    );
    // Watched, not changed: once the dispatcher has stopped, only the wait for cut requests holds the
    // database open.
    const { dispatcher } = service.services;
    const stopDispatcher = dispatcher.stop.bind(dispatcher);
    let dispatcherStopped: Promise<unknown> | undefined;
    dispatcher.stop = () => {
      const stopping = stopDispatcher();
      dispatcherStopped = stopping;
      return stopping;
    };
    const shop = await service.merchant({ allowedOrigins: [SHOP] });
    const created = await service.call('POST', '/checkout/orders', {
      body: { merchantId: shop.merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: SHOP },
    });
    const orderId = created.json.orderId as string;
    await service.call('POST', `/checkout/api/orders/${orderId}/otp`, {
      body: { email: TEST_SHOPPER_EMAIL },
    });
    const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
      body: { email: TEST_SHOPPER_EMAIL, code: '123456' },
    });
    const headers = { authorization: `Bearer ${verified.json.shopperToken}` };
    const wallet = await service.call('GET', '/checkout/api/wallet', { headers });
    const card = wallet.json.cards.find(
      (entry: { last4CardNumber: string }) => entry.last4CardNumber === '1111',
    );

    const held = proxy.holdNext();
    const paying = service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      body: { paymentId: card.paymentId },
      headers,
    });
    await held.arrived;
    const stopped = service.close();
    // The grace period ends with the payment still waiting: its client's connection is cut, and the stop
    // waits for its work before it closes the database.
    await expect(paying).rejects.toThrow();
    await until(async () => service.logs.join('').includes('waiting for the work of requests cut'));
    await dispatcherStopped;
    held.release();
    await stopped;

    const lines = service.logs.join('');
    expect(lines).not.toContain('destroyed');
    expect(stopLine(service.logs)).toMatchObject({ requestsCut: 1, requestsStillRunning: 0 });
    const db = createDb(database.url);
    try {
      const order = await db.kysely
        .selectFrom('orders')
        .select('status')
        .where('id', '=', orderId)
        .executeTakeFirst();
      expect(order?.status).toBe('SUCCEEDED');
    } finally {
      await db.close();
    }
  });
});
