import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ACTOR } from '../test-support/actor.js';
import { visaNumber } from '../test-support/cards.js';
import { runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { credentialsBody, startTestService, type TestService } from '../test-support/service.js';
import { describeEvent } from './listen-command.js';
import { freePort } from './service-commands.js';

describe('webhooks listen: what it prints of an event', () => {
  it('gives the identifiers, and of the credentials their type and last four digits only', () => {
    const line = describeEvent({
      eventName: 'PAYMENT_CREDENTIALS',
      paymentId: 'pm_1',
      merchantReference: 'order-7',
      billingAddress: { address1: '1 Main St' },
      credentials: [
        { type: 'NETWORK_TOKEN', token: '4895370012345678', cvv: 'AgAAAAAABk4=' },
        { type: 'PAN', pan: visaNumber(3) },
      ],
    });
    expect(line).toBe(
      `paymentId=pm_1 merchantReference=order-7 credentials=NETWORK_TOKEN ending 5678, PAN ending ${visaNumber(3).slice(-4)}`,
    );
  });
});

/**
 * Runs `webhooks listen` in-process until `stop()`, and resolves once it listens (failing the test if it
 * ends before); what it prints is kept as it comes.
 */
async function startListening(env: Record<string, string>, args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let stop: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  let listening: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    listening = resolve;
  });
  const running = runCli(env, ['webhooks', 'listen', ...args], {
    stdout: (text) => stdout.push(text),
    stderr: (text) => {
      stderr.push(text);
      if (text.startsWith('Listening on')) listening();
    },
    waitForStop: () => stopped,
  });
  await Promise.race([ready, running.then((outcome) => expect.fail(JSON.stringify(outcome)))]);
  const printed = (count: number) => expect.poll(() => stdout.length, { timeout: 10_000 }).toBe(count);
  return { stdout, stderr, printed, stop, running };
}

describe('wallet-checkout webhooks listen --secret', () => {
  it('checks and prints webhooks without the service: no configuration, data folder or database', async () => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'wallet-listen-'));
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const port = await freePort('127.0.0.1');
    // Values the service would refuse to start with: the receiver reads none of them.
    const env = {
      DATABASE_URL: `sqlite:${path.join(folder, 'data', 'wallet.db')}`,
      DATA_DIR: path.join(folder, 'data'),
      WALLET_ENV: 'production',
    };
    const { stdout, printed, stop, running } = await startListening(env, [
      ...['--secret', secret, '--port', String(port), '--path', '/hooks', '--json'],
    ]);

    const body = JSON.stringify({
      eventName: 'WEBHOOK_TEST',
      merchantId: 'mch_1',
      sentAt: '2030-01-01T00:00:00Z',
    });
    const sentAt = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'tst_alone',
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign('tst_alone', sentAt, body),
    };
    const delivered = await fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST', headers, body });
    expect(delivered.status).toBe(204);
    await printed(1);
    expect(JSON.parse(stdout[0] as string)).toEqual({
      eventName: 'WEBHOOK_TEST',
      webhookId: 'tst_alone',
      fields: 'merchantId=mch_1 sentAt=2030-01-01T00:00:00Z',
      status: 204,
    });

    stop('SIGTERM');
    expect((await running).code).toBe(0);
    expect(await fs.readdir(folder)).toEqual([]);
    await fs.rm(folder, { recursive: true });
  });
});

describe.each(engines())('wallet-checkout webhooks listen on %s', (engine) => {
  let database: TestDatabase;
  let service: TestService;

  beforeAll(async () => {
    database = await testDatabase(engine);
    service = await startTestService(engine, {}, { database });
  });
  afterAll(async () => {
    await service?.close();
    await database?.drop();
  });

  it("receives a merchant's webhooks on its URL's port and path, checks them, and prints no card data", async () => {
    const port = await freePort('127.0.0.1');
    const { merchantId, apiKey } = await service.merchant({
      webhookUrl: `http://localhost:${port}/hooks`,
      credentialTypes: ['NETWORK_TOKEN', 'PAN'],
    });
    const { stdout, stderr, printed, stop, running } = await startListening(
      { DATABASE_URL: database.url, DATA_DIR: database.dataDir },
      ['--merchant', merchantId],
    );
    expect(stderr.join('')).toContain(`Listening on http://127.0.0.1:${port}/hooks with 1 secret(s)`);

    const tested = await service.call('POST', '/webhooks/test', { apiKey });
    expect([tested.json.delivered, tested.json.statusCode]).toEqual([true, 204]);
    await printed(1);
    expect(stdout[0]).toMatch(
      new RegExp(
        `^\\S+Z {2}WEBHOOK_TEST {2}tst_\\w+ {2}merchantId=${merchantId} sentAt=\\S+ {2}\\(answered 204\\)\\n$`,
      ),
    );

    const session = await service.session(apiKey);
    const acknowledged = await service.call('POST', '/payments/credentials', {
      apiKey,
      body: credentialsBody(session, { merchantReference: 'listen-1' }),
    });
    expect(acknowledged.status).toBe(200);
    await printed(2);
    expect(stdout[1]).toMatch(
      /^\S+Z {2}PAYMENT_CREDENTIALS {2}msg_\w+ {2}paymentId=\S+ merchantId=mch_\w+ merchantReference=listen-1 credentials=NETWORK_TOKEN ending \d{4}, PAN ending 1111 {2}\(answered 204\)\n$/,
    );
    // Its 204 is recorded once the receiver answered: the request is then DELIVERED.
    const lookup = () =>
      service.call('GET', `/payments/credentials/${acknowledged.json.requestId}`, { apiKey });
    await expect.poll(async () => (await lookup()).json.state).toBe('DELIVERED');
    expect(stdout.join('')).not.toContain('4111111111111111');

    // Unsigned: refused; elsewhere: ignored.
    const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_x',
        'webhook-timestamp': '1',
        'webhook-signature': 'v1,AAAA',
      },
      body: '{}',
    });
    expect(forged.status).toBe(400);
    await printed(3);
    expect(stdout[2]).toMatch(/^\S+Z {2}refused: .+\n$/);
    expect((await fetch(`http://127.0.0.1:${port}/elsewhere`, { method: 'POST', body: '{}' })).status).toBe(
      404,
    );
    await printed(4);
    expect(stdout[3]).toMatch(/^\S+Z {2}ignored POST \/elsewhere \(404\): listening for POST \/hooks\n$/);

    // A rotation since it started, the old secret no longer signing: it reads the secrets again.
    await service.services.merchants.rotateWebhookSecret(merchantId, TEST_ACTOR, { overlapSeconds: 0 });
    const rotated = await service.call('POST', '/webhooks/test', { apiKey });
    expect([rotated.json.delivered, rotated.json.statusCode]).toEqual([true, 204]);
    await printed(5);
    expect(stdout[4]).toMatch(/^\S+Z {2}WEBHOOK_TEST {2}tst_\w+ .+\(answered 204\)\n$/);

    stop('SIGTERM');
    expect((await running).code).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/hooks`, { method: 'POST' })).rejects.toThrow();
  });

  it('names what is missing or wrong in its command line', async () => {
    const env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    const neither = await runCli(env, ['webhooks', 'listen']);
    expect([neither.code, neither.stderr]).toEqual([
      2,
      expect.stringMatching(/^error: give --merchant <id> or --secret <whsec_…>, one of the two/),
    ]);
    const notSecret = await runCli(env, ['webhooks', 'listen', '--secret', 'sk_test_x']);
    expect(notSecret.stderr).toMatch(/^error: --secret must be a webhook secret, whsec_…/);
    const mistyped = await runCli(env, ['webhooks', 'listen', '--secret', 'whsec_abc']);
    expect([mistyped.code, mistyped.stderr]).toEqual([
      2,
      expect.stringMatching(/^error: --secret is not a webhook secret: whsec_ must be followed by base64/),
    ]);
    const unknown = await runCli(env, ['webhooks', 'listen', '--merchant', 'mch_missing']);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining('merchant mch_missing does not exist'),
    ]);
  });
});
