/**
 * A staging service others reach (its PUBLIC_URL is not on loopback) keeps webhooks off the machine's own
 * loopback addresses, even for a URL saved while a local service allowed them: the test webhook and every
 * delivery attempt, made in the delivery worker threads, are refused before dialling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { credentialsBody, startTestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';

const REFUSED = /is a loopback address; staging delivers to public addresses only/;

describe.each(engines())('loopback webhooks on a shared staging service, on %s', (engine) => {
  let database: TestDatabase;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string };

  beforeAll(async () => {
    database = await testDatabase(engine);
    receiver = await startReceiver();
    // Saved by a service on a developer's machine: PUBLIC_URL is on loopback, so loopback is allowed.
    const local = await startTestService(engine, {}, { database });
    try {
      shop = await local.merchant({ webhookUrl: receiver.url });
    } finally {
      await local.close();
    }
  });
  afterAll(async () => {
    await receiver.close();
    await database.drop();
  });

  it('refuses the test webhook and every credentials delivery, and the receiver sees nothing', async () => {
    const shared = await startTestService(
      engine,
      { PUBLIC_URL: 'https://staging.pay.example', WEBHOOK_WORKER: '1' },
      { database },
    );
    try {
      const tested = await shared.call('POST', '/webhooks/test', { apiKey: shop.apiKey });
      expect(tested.status).toBe(200);
      expect(tested.json).toMatchObject({ delivered: false, statusCode: null });
      expect(tested.json.error).toMatch(REFUSED);

      const session = await shared.session(shop.apiKey);
      const acknowledged = await shared.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session),
      });
      expect(acknowledged.status).toBe(200);
      const failed = await until(async () => {
        const lookup = await shared.call('GET', `/payments/credentials/${acknowledged.json.requestId}`, {
          apiKey: shop.apiKey,
        });
        return lookup.json.state === 'FAILED' && lookup.json;
      });
      expect(failed.webhook.attempts).toHaveLength(4);
      for (const attempt of failed.webhook.attempts) expect(attempt.error).toMatch(REFUSED);
      expect(receiver.received).toEqual([]);
    } finally {
      await shared.close();
    }
  });

  it('delivers there again with WEBHOOK_LOOPBACK=on', async () => {
    const opened = await startTestService(
      engine,
      { PUBLIC_URL: 'https://staging.pay.example', WEBHOOK_LOOPBACK: 'on', WEBHOOK_WORKER: '1' },
      { database },
    );
    try {
      const arrived = receiver.next();
      const tested = await opened.call('POST', '/webhooks/test', { apiKey: shop.apiKey });
      expect(tested.json).toMatchObject({ delivered: true, statusCode: 200, error: null });
      expect((await arrived).headers['webhook-id']).toBe(tested.json.webhookId);
    } finally {
      await opened.close();
    }
  });
});
