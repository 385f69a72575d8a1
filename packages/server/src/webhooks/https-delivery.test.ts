import type { ChildProcess } from 'node:child_process';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { type Receiver, startReceiver, verifiedBody } from '../test-support/receiver.js';
import { startServiceProcess } from '../test-support/service-process.js';
import { LOCALHOST_TLS, SELF_SIGNED_TLS, TEST_CA_FILE } from '../test-support/tls.js';
import { until } from '../test-support/wait.js';

/**
 * Webhooks over https, as production sends them: the service in a process of its own that trusts the test
 * certificate authority through NODE_EXTRA_CA_CERTS, as an operator's would trust a private one, and
 * receivers on 127.0.0.1 with real certificates (staging, which lets a webhook reach loopback).
 */
describe.each(engines())('webhook delivery over https on %s', (engine) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let trusted: Receiver;
  let selfSigned: Receiver;
  let service: { child: ChildProcess; url: string };

  async function merchant(webhookUrl: string): Promise<{ apiKey: string; webhookSecret: string }> {
    const args = ['merchant', 'create', '--name', 'TLS Shop', '--webhook-url', webhookUrl];
    return json(await runCli(env, [...args, '--approve-credentials', 'PAN', '--json'])) as {
      apiKey: string;
      webhookSecret: string;
    };
  }

  async function call(method: 'GET' | 'POST', path: string, apiKey: string, body?: unknown) {
    const response = await request(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the test reads the answers it asserts on.
    return { status: response.statusCode, json: (await response.body.json()) as any };
  }

  /** Asks for credentials for the sandbox shopper's first card; answers the acknowledgement. */
  async function askCredentials(apiKey: string, merchantReference: string) {
    const session = await call('POST', '/sandbox/sessions', apiKey, {});
    expect(session.status).toBe(200);
    const ack = await call('POST', '/payments/credentials', apiKey, {
      paymentId: session.json.paymentMethods[0].paymentId,
      sessionId: session.json.sessionId,
      amount: 1500,
      merchantReference,
      currency: 'USD',
    });
    expect(ack.status).toBe(200);
    return ack.json as { requestId: string };
  }

  /** The request's first recorded attempt, once there is one. */
  function firstAttempt(apiKey: string, requestId: string) {
    return until(async () => {
      const lookup = await call('GET', `/payments/credentials/${requestId}`, apiKey);
      return lookup.json.webhook.attempts[0] as
        | { statusCode: number | null; error: string | null }
        | undefined;
    });
  }

  beforeAll(async () => {
    database = await testDatabase(engine);
    env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    trusted = await startReceiver({ tls: LOCALHOST_TLS });
    selfSigned = await startReceiver({ tls: SELF_SIGNED_TLS });
  });
  afterAll(async () => {
    if (service) {
      const exited = new Promise((resolve) => service.child.once('exit', resolve));
      service.child.kill('SIGTERM');
      await exited;
    }
    await trusted?.close();
    await selfSigned?.close();
    await database?.drop();
  });

  it('delivers to a receiver whose certificate a trusted authority signed, naming the host in SNI', async () => {
    const shop = await merchant(trusted.url);
    service = await startServiceProcess({ ...env, NODE_EXTRA_CA_CERTS: TEST_CA_FILE });
    await askCredentials(shop.apiKey, 'tls-trusted');
    const webhook = await trusted.next();
    expect(webhook.servername).toBe('localhost');
    expect(verifiedBody<{ merchantReference: string }>(shop.webhookSecret, webhook).merchantReference).toBe(
      'tls-trusted',
    );
  });

  it('records a certificate nobody trusts as a failed attempt that says so, and sends nothing', async () => {
    const shop = await merchant(selfSigned.url);
    const { requestId } = await askCredentials(shop.apiKey, 'tls-self-signed');
    const attempt = await firstAttempt(shop.apiKey, requestId);
    expect(attempt).toEqual({
      ...attempt,
      statusCode: null,
      error: expect.stringMatching(/self-signed certificate/),
    });
    expect(selfSigned.received).toEqual([]);
  });

  it('records a certificate for another name as a failed attempt that names the mismatch', async () => {
    const shop = await merchant(trusted.url.replace('//localhost:', '//127.0.0.1:'));
    const before = trusted.received.length;
    const { requestId } = await askCredentials(shop.apiKey, 'tls-wrong-name');
    const attempt = await firstAttempt(shop.apiKey, requestId);
    expect(attempt?.statusCode).toBeNull();
    expect(attempt?.error).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(trusted.received).toHaveLength(before);
  });
});
