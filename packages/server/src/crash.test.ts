import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './cli/run.js';
import { engines, type TestDatabase, testDatabase } from './test-support/db.js';
import { startServiceProcess } from './test-support/service-process.js';

/** A receiver that holds every request open until `release()`, then answers 200 to all, old and new. */
async function holdingReceiver() {
  const held: http.ServerResponse[] = [];
  const delivered = new Map<string, string>();
  const waiters: { references: string[]; resolve(): void }[] = [];
  const settle = () => {
    for (const waiter of waiters.filter((w) => w.references.every((reference) => delivered.has(reference)))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  let holding = true;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (holding) {
        held.push(res);
        return;
      }
      const { merchantReference } = JSON.parse(Buffer.concat(chunks).toString());
      delivered.set(merchantReference, req.headers['webhook-id'] as string);
      res.end();
      settle();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    delivered,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.destroy();
    },
    /**
     * Resolves once a webhook for each of `references` has been answered 200; rejects, naming those
     * still missing, when that has not happened within `withinMs`.
     */
    deliveredAll: (references: string[], withinMs: number) =>
      new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => {
          const missing = references.filter((reference) => !delivered.has(reference));
          reject(new Error(`${missing.length} never delivered: ${missing.join(', ')}`));
        }, withinMs);
        waiters.push({
          references,
          resolve: () => {
            clearTimeout(deadline);
            resolve();
          },
        });
        settle();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/**
 * An acknowledgement is a promise: the process is killed (SIGKILL, no clean-up) right after it sent 40
 * acknowledgements while their webhooks were still in flight, and a new process delivers every one of
 * them, with the webhook-id of the first attempt.
 */
describe.each(engines())('a crash after the acknowledgement on %s', (engine) => {
  let database: TestDatabase;
  let receiver: Awaited<ReturnType<typeof holdingReceiver>>;
  let env: Record<string, string>;
  let apiKey: string;

  beforeAll(async () => {
    database = await testDatabase(engine);
    receiver = await holdingReceiver();
    env = {
      DATABASE_URL: database.url,
      DATA_DIR: database.dataDir,
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_LEASE_MS: '1000',
      CREDENTIALS_RETRY_DELAYS_MS: '50,100,200,400,800',
    };
    let out = '';
    const code = await run(
      [
        'merchant',
        'create',
        '--name',
        'Crash Shop',
        '--webhook-url',
        receiver.url,
        '--approve-credentials',
        'NETWORK_TOKEN',
        '--json',
      ],
      {
        stdout: (text) => {
          out += text;
        },
        stderr: () => {},
        env,
      },
    );
    expect(code).toBe(0);
    apiKey = JSON.parse(out).apiKey;
  });
  afterAll(async () => {
    await receiver.close();
    await database.drop();
  });

  const headers = () => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' });

  /** A sandbox session and its first card, for the credentials requests of one test. */
  async function sessionAt(url: string) {
    const response = await request(`${url}/sandbox/sessions`, {
      method: 'POST',
      headers: headers(),
      body: '{}',
    });
    const session = (await response.body.json()) as {
      sessionId: string;
      paymentMethods: { paymentId: string }[];
    };
    return { sessionId: session.sessionId, paymentId: session.paymentMethods[0]?.paymentId };
  }

  function requestCredentials(url: string, session: { sessionId: string }, merchantReference: string) {
    return request(`${url}/payments/credentials`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ ...session, amount: 100, merchantReference, currency: 'USD' }),
    });
  }

  /**
   * With a new process started: every acknowledged request (merchantReference → requestId) is there,
   * and its webhook reached the receiver with the message id the request shows.
   */
  async function expectAllDelivered(acked: Map<string, string>) {
    const second = await startServiceProcess(env);
    try {
      await receiver.deliveredAll([...acked.keys()], 20_000);
      for (const [merchantReference, requestId] of acked) {
        const lookup = await request(`${second.url}/payments/credentials/${requestId}`, {
          headers: headers(),
        });
        expect(lookup.statusCode).toBe(200);
        const view = (await lookup.body.json()) as {
          merchantReference: string;
          webhook: { messageId: string };
        };
        expect(view.merchantReference).toBe(merchantReference);
        expect(receiver.delivered.get(merchantReference)).toBe(view.webhook.messageId);
      }
    } finally {
      await killed(second.child);
    }
  }

  it('loses no acknowledged request and no webhook', { timeout: 60_000 }, async () => {
    const first = await startServiceProcess(env);
    const session = await sessionAt(first.url);
    const acked = new Map<string, string>();
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const response = await requestCredentials(first.url, session, `crash-${i}`);
        expect(response.statusCode).toBe(200);
        acked.set(`crash-${i}`, ((await response.body.json()) as { requestId: string }).requestId);
      }),
    );
    await killed(first.child);
    expect(acked.size).toBe(40);

    receiver.release();
    await expectAllDelivered(acked);
  });

  it('loses no acknowledged request when killed in the middle of a stream of requests', {
    timeout: 60_000,
  }, async () => {
    receiver.release();
    const first = await startServiceProcess(env);
    const session = await sessionAt(first.url);
    // Sixteen clients send one request after another; the process is killed the moment the 150th
    // acknowledgement arrives, with other requests in flight, in a group commit or being written.
    const acked = new Map<string, string>();
    let sent = 0;
    let crash: Promise<void> | undefined;
    const client = async () => {
      while (crash === undefined) {
        const merchantReference = `stream-${sent++}`;
        try {
          const response = await requestCredentials(first.url, session, merchantReference);
          const body = (await response.body.json()) as { requestId: string };
          if (response.statusCode !== 200 || crash !== undefined) return;
          acked.set(merchantReference, body.requestId);
          if (acked.size === 150) crash = killed(first.child);
        } catch {
          // The connection died with the process: not acknowledged, so not promised.
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, client));
    await crash;
    expect(acked.size).toBe(150);

    await expectAllDelivered(acked);
  });
});
