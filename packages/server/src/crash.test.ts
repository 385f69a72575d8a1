import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './cli/run.js';
import { engines, type TestDatabase, testDatabase } from './test-support/db.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

/** A receiver that holds every request open until `release()`, then answers 200 to all, old and new. */
async function holdingReceiver() {
  const held: http.ServerResponse[] = [];
  const delivered = new Map<string, string>();
  const waiters: { count: number; resolve(): void }[] = [];
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
      for (const waiter of waiters.filter((w) => delivered.size >= w.count)) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    heldCount: () => held.length,
    delivered,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.destroy();
    },
    deliveredAtLeast: (count: number) =>
      new Promise<void>((resolve) =>
        delivered.size >= count ? resolve() : waiters.push({ count, resolve }),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function startProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve', '--json'], {
    env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /"url":\s*"(http:\/\/[^"]+)"/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}: ${out}`)));
  });
  return { child, url };
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

  it('loses no acknowledged request and no webhook', { timeout: 60_000 }, async () => {
    const first = await startProcess(env);
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const sessionResponse = await request(`${first.url}/sandbox/sessions`, {
      method: 'POST',
      headers,
      body: '{}',
    });
    const session = (await sessionResponse.body.json()) as {
      sessionId: string;
      paymentMethods: { paymentId: string }[];
    };
    const acks = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const response = await request(`${first.url}/payments/credentials`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            paymentId: session.paymentMethods[0]?.paymentId,
            sessionId: session.sessionId,
            amount: 100 + i,
            merchantReference: `crash-${i}`,
            currency: 'USD',
          }),
        });
        expect(response.statusCode).toBe(200);
        return (await response.body.json()) as { requestId: string };
      }),
    );
    await killed(first.child);
    expect(acks).toHaveLength(40);

    receiver.release();
    const second = await startProcess(env);
    try {
      await receiver.deliveredAtLeast(40);
      for (let i = 0; i < 40; i++) expect(receiver.delivered.has(`crash-${i}`)).toBe(true);
      for (const ack of acks) {
        const lookup = await request(`${second.url}/payments/credentials/${ack.requestId}`, { headers });
        expect(lookup.statusCode).toBe(200);
        const view = (await lookup.body.json()) as {
          merchantReference: string;
          webhook: { messageId: string };
        };
        expect(receiver.delivered.get(view.merchantReference)).toBe(view.webhook.messageId);
      }
    } finally {
      await killed(second.child);
    }
  });
});
