/**
 * The whole service for integration tests: a fresh database on the chosen engine, a real HTTP server on
 * 127.0.0.1 (free port), the real dispatcher, and every log line kept in memory for leak checks.
 */
import { Writable } from 'node:stream';
import { request as httpRequest } from 'undici';
import { type Config, loadConfig } from '../config.js';
import type { Engine } from '../db/index.js';
import { createLogger } from '../log.js';
import type { CreateMerchantInput } from '../merchants/index.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { type RunningService, startService } from '../server.js';
import { TEST_SHOPPER_CODE } from '../shopper-auth/index.js';
import { TEST_ACTOR } from './actor.js';
import { type TestDatabase, testDatabase } from './db.js';

export interface TestService extends RunningService {
  dataDir: string;
  logs: string[];
  /** A merchant created through the domain service, with its one-time key and secret. */
  merchant(
    input?: Partial<CreateMerchantInput>,
  ): Promise<{ merchantId: string; apiKey: string; webhookSecret: string }>;
  call(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    options?: { apiKey?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies freely and assert on them.
    json: any;
    text: string;
  }>;
  /** A payment-carousel session for the sandbox test shopper, through the public route. */
  session(
    apiKey: string,
  ): Promise<{ sessionId: string; paymentMethods: { paymentId: string; last4CardNumber: string }[] }>;
  /**
   * The newest e-mail about a remembered device in the sandbox mailbox of `email`, once every e-mail
   * woken has gone (they are sent after the answer), with the link it gives to forget every device.
   */
  deviceEmail(email: string): Promise<{ text: string; link: URL }>;
}

/**
 * `options.database`: run on a database the caller made (and drops), e.g. to start the service again on
 * what an earlier one wrote; by default a fresh one, dropped by `close()`.
 */
/** A valid `POST /payments/credentials` body for the session's first card; `overrides` replace fields. */
export function credentialsBody(
  session: { sessionId: string; paymentMethods: { paymentId: string }[] },
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    paymentId: session.paymentMethods[0]?.paymentId,
    sessionId: session.sessionId,
    amount: 2599,
    merchantReference: 'order-1001',
    currency: 'USD',
    ...overrides,
  };
}

/**
 * The sandbox test shopper signed in, with its fixed code, to a new order of the merchant made from
 * `origin` (one of its allowed origins): the order and the header that carries the shopper token.
 */
export async function signInTestShopper(
  service: TestService,
  merchantId: string,
  origin: string,
): Promise<{ orderId: string; headers: { authorization: string } }> {
  const created = await service.call('POST', '/checkout/orders', {
    body: { merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
    headers: { origin },
  });
  const orderId = created.json.orderId as string;
  const email = TEST_SHOPPER_EMAIL;
  await service.call('POST', `/checkout/api/orders/${orderId}/otp`, { body: { email } });
  const verified = await service.call('POST', `/checkout/api/orders/${orderId}/otp/verify`, {
    body: { email, code: TEST_SHOPPER_CODE },
  });
  if (verified.status !== 200) throw new Error(`sign-in: ${verified.status} ${verified.text}`);
  return { orderId, headers: { authorization: `Bearer ${verified.json.shopperToken}` } };
}

export async function startTestService(
  engine: Engine,
  env: Record<string, string> = {},
  options: { database?: TestDatabase } = {},
): Promise<TestService> {
  const database = options.database ?? (await testDatabase(engine));
  const config: Config = loadConfig({
    DATABASE_URL: database.url,
    DATA_DIR: database.dataDir,
    PORT: '0',
    WALLET_ENV: 'staging',
    CREDENTIALS_RETRY_DELAYS_MS: '50,100,200',
    WEBHOOK_RETRY_DELAYS_MS: '50,100,200',
    WEBHOOK_TIMEOUT_MS: '2000',
    LOG_LEVEL: 'info',
    // No sandbox gateway unless the test starts one: not whatever a developer's `npm start` runs on 4010.
    SANDBOX_GATEWAY_URL: 'http://127.0.0.1:9',
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const running = await startService(config, createLogger(config.logLevel, sink));
  const call: TestService['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await httpRequest(`${running.url}${path}`, { method, headers, body });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, headers: response.headers, json, text };
  };
  return {
    ...running,
    dataDir: database.dataDir,
    logs,
    async merchant(input = {}) {
      const created = await running.services.merchants.create(
        {
          name: 'Test Shop',
          credentialTypes: ['NETWORK_TOKEN', 'PAN'],
          ...input,
        },
        TEST_ACTOR,
      );
      return {
        merchantId: created.merchant.id,
        apiKey: created.apiKey,
        webhookSecret: created.webhookSecret,
      };
    },
    call,
    async session(apiKey) {
      const response = await call('POST', '/sandbox/sessions', { apiKey, body: {} });
      if (response.status !== 200) throw new Error(`sandbox session: ${response.status} ${response.text}`);
      return response.json;
    },
    async deviceEmail(email) {
      await running.services.shopperAuth.notices.settled();
      const mailbox = await call('GET', `/sandbox/messages?to=${encodeURIComponent(email)}`);
      const [told] = (mailbox.json.data as { subject: string; text: string }[]).filter(
        (message) => message.subject === 'A device now remembers you for checkout',
      );
      const link = /(http\S+\/checkout\/devices\/forget\?token=\S+)/.exec(told?.text ?? '')?.[1];
      if (!told || !link) throw new Error(`no e-mail about a remembered device to ${email}`);
      return { text: told.text, link: new URL(link) };
    },
    async close() {
      await running.close();
      if (!options.database) await database.drop();
    },
  };
}
