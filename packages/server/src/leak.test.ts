import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from './sandbox/seed.js';
import { engines } from './test-support/db.js';
import { type Receiver, startReceiver } from './test-support/receiver.js';
import { startTestService, type TestService } from './test-support/service.js';
import { until } from './test-support/wait.js';

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * After a full run of the credentials flow — including a raw processor response that carries the card
 * number and a request that fails validation with card data in it — no card number, network token,
 * cryptogram, API key or webhook secret is in the log output, in any database row, or in any file of the
 * data folder (the SQLite database and its write-ahead log included).
 */
describe.each(engines())('secrets at rest and in logs on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  const secrets: string[] = TEST_CARDS.map((card) => card.pan);

  beforeAll(async () => {
    service = await startTestService(engine, { LOG_LEVEL: 'trace' });
    receiver = await startReceiver();
    const shop = await service.merchant({ webhookUrl: receiver.url });
    secrets.push(shop.apiKey, shop.webhookSecret);
    const session = await service.session(shop.apiKey);
    for (const method of session.paymentMethods.slice(0, 3)) {
      const delivered = receiver.next();
      const body = {
        paymentId: method.paymentId,
        sessionId: session.sessionId,
        amount: 500,
        merchantReference: `leak-${method.last4CardNumber}`,
        currency: 'USD',
      };
      const ack = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body,
        headers: { 'idempotency-key': `leak-${method.paymentId}` },
      });
      expect(ack.status).toBe(200);
      const payload = JSON.parse((await delivered).body);
      for (const credential of payload.credentials)
        secrets.push(credential.token ?? credential.pan, ...(credential.cvv ? [credential.cvv] : []));
      const pan = payload.credentials.find((credential: { type: string }) => credential.type === 'PAN').pan;
      const report = await service.call('POST', '/payments/externalresponse', {
        apiKey: shop.apiKey,
        body: {
          paymentId: method.paymentId,
          pspRawResponse: `{"card":"${pan}","status":"approved"}`,
          amount: 500,
          pspHostName: 'psp',
          currency: 'USD',
          isRecurring: false,
        },
      });
      expect(report.status).toBe(200);
      const rejected = await service.call('POST', '/payments/externalresponse', {
        apiKey: shop.apiKey,
        body: {
          paymentId: method.paymentId,
          pspRawResponse: pan,
          amount: `${pan}`,
          pspHostName: pan,
          currency: 'USD',
          isRecurring: false,
        },
      });
      expect(rejected.status).toBe(400);
      expect(rejected.text).not.toContain(pan);
    }
    await until(async () =>
      (await service.services.webhooks.list(shop.merchantId)).every(
        (message) => message.state === 'DELIVERED',
      ),
    );
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('collected the secrets it looks for', () => {
    expect(secrets.length).toBeGreaterThanOrEqual(TEST_CARDS.length + 2 + 3 * 3);
    expect(service.logs.length).toBeGreaterThan(0);
  });

  it('keeps them out of the logs', () => {
    const output = service.logs.join('');
    for (const secret of secrets) expect(output).not.toContain(secret);
  });

  it('keeps them out of every database row', async () => {
    const tables = await service.services.db.kysely.introspection.getTables();
    expect(tables.length).toBeGreaterThan(10);
    for (const { name: table } of tables) {
      const rows = await sql`select * from ${sql.table(table)}`.execute(service.services.db.kysely);
      const text = JSON.stringify(rows.rows);
      for (const secret of secrets) expect(text, `${table} holds a secret`).not.toContain(secret);
    }
  });

  it('keeps them out of every file of the data folder', () => {
    const files = filesUnder(service.dataDir);
    if (engine === 'sqlite') expect(files.some((file) => file.endsWith('-wal'))).toBe(true);
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      for (const secret of secrets)
        expect(bytes.includes(Buffer.from(secret)), `${file} holds a secret`).toBe(false);
    }
  });
});
