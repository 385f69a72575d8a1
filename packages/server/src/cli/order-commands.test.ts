import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { databaseLine, expectIsoTimes, ISO_TIME, json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { type SandboxGatewayServer, startSandboxGateway } from '../test-support/sandbox-gateway.js';
import { signInTestShopper, startTestService, type TestService } from '../test-support/service.js';

const SHOP = 'https://shop.example';

describe.each(engines())('wallet-checkout order … on %s', (engine) => {
  let database: TestDatabase;
  let gateway: SandboxGatewayServer;
  let service: TestService;
  let env: Record<string, string>;
  let merchantId: string;
  let paidId: string;
  let openId: string;
  let gatewayTransactionId: string;
  let authCode: string;
  const cli = (...argv: string[]) => runCli(env, argv);

  beforeAll(async () => {
    database = await testDatabase(engine);
    gateway = await startSandboxGateway();
    service = await startTestService(engine, { SANDBOX_GATEWAY_URL: gateway.url }, { database });
    env = { DATABASE_URL: database.url, DATA_DIR: database.dataDir };
    // Nothing listens at its webhook URL: the ORDER_SUCCEEDED message waits for a retry.
    ({ merchantId } = await service.merchant({
      name: 'Support Shop',
      allowedOrigins: [SHOP],
      webhookUrl: 'http://127.0.0.1:9/webhooks',
    }));
    const { orderId, headers } = await signInTestShopper(service, merchantId, SHOP);
    const [card] = (await service.call('GET', '/checkout/api/wallet', { headers })).json.cards;
    const paid = await service.call('POST', `/checkout/api/orders/${orderId}/pay`, {
      headers,
      body: { paymentId: card.paymentId, cvv: '123' },
    });
    expect(paid.json.outcome).toBe('success');
    paidId = orderId;
    gatewayTransactionId = paid.json.transactionDetails.gatewayTransactionId;
    authCode = paid.json.transactionDetails.gatewayResponse.response.authCode;
    ({ orderId: openId } = await signInTestShopper(service, merchantId, SHOP));
  });
  afterAll(async () => {
    await service?.close();
    await gateway?.close();
    await database?.drop();
  });

  it("shows an order with its gateway ids and webhooks, never the shopper's email or the gateway's response", async () => {
    const shown = await cli('order', 'show', paidId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`merchant:     Support Shop (${merchantId})`);
    expect(shown.stdout).toMatch(/^status: +SUCCEEDED$/m);
    expect(shown.stdout).toContain(`gateway:      ${gatewayTransactionId}`);
    expect(shown.stdout).toMatch(/^msg_\w+ +ORDER_SUCCEEDED +(PENDING|FAILED) /m);

    const { order, webhooks } = json(await cli('order', 'show', paidId, '--json')) as {
      order: Record<string, unknown>;
      webhooks: { eventName: string }[];
    };
    expect(order).toMatchObject({
      orderId: paidId,
      merchantId,
      status: 'SUCCEEDED',
      subtotal: 2500,
      total: 2500,
      gatewayTransactionId,
      error: null,
      createdAt: expect.stringMatching(ISO_TIME),
    });
    expectIsoTimes({ order, webhooks });
    expect(webhooks.map((message) => message.eventName)).toEqual(['ORDER_SUCCEEDED']);
    for (const output of [shown.stdout, JSON.stringify(order)]) {
      expect(output).not.toContain(TEST_SHOPPER_EMAIL);
      expect(output).not.toContain(authCode);
    }

    const missing = await cli('order', 'show', 'ord_missing');
    expect([missing.code, missing.stderr]).toEqual([
      1,
      `${databaseLine(env.DATABASE_URL as string)}error: order ord_missing was not found.\n`,
    ]);
  });

  it("lists a merchant's orders newest first, narrowed by status or creation time", async () => {
    const all = json(await cli('order', 'list', '--merchant', merchantId, '--json')) as {
      orders: { orderId: string; status: string }[];
    };
    expectIsoTimes(all);
    expect(all.orders.map((order) => [order.orderId, order.status])).toEqual([
      [openId, 'CREATED'],
      [paidId, 'SUCCEEDED'],
    ]);
    const text = await cli('order', 'list', '--merchant', merchantId, '--status', 'SUCCEEDED');
    expect(text.stdout).toMatch(new RegExp(`^${paidId} +- +SUCCEEDED +\\$25\\.00 `, 'm'));
    expect(text.stdout).not.toContain(openId);
    const later = await cli('order', 'list', '--merchant', merchantId, '--since', '2999-01-01T00:00:00Z');
    expect(later.stdout).toBe('No orders match.\n');
    const one = await cli('order', 'list', '--merchant', merchantId, '--limit', '1');
    expect(one.stdout).toContain('(more: narrow with --since or --status, or raise --limit)');
  });

  it('refuses a bad command line (exit 2) and an unknown merchant (exit 1)', async () => {
    const status = await cli('order', 'list', '--merchant', merchantId, '--status', 'PAID');
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(
      '--status must be one of CREATED, PROCESSING, SUCCEEDED, FAILED, ABANDONED',
    );
    expect((await cli('order', 'list')).code).toBe(2);
    const unknown = await cli('order', 'list', '--merchant', 'mch_missing');
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      `${databaseLine(env.DATABASE_URL as string)}error: merchant mch_missing was not found.\n`,
    ]);
  });
});
