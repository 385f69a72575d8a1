import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../db/index.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import { type Receiver, startReceiver } from '../test-support/receiver.js';
import { credentialsBody, startTestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { parseKeyRing } from '../vault/keyring.js';
import { reencryptAll } from '../vault/rotate.js';
import type { PaymentCredentialsPayload } from './types.js';

const keyEntry = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe.each(engines())('a credentials webhook retried across a vault key rotation on %s', (engine) => {
  let database: TestDatabase;
  let receiver: Receiver;

  beforeAll(async () => {
    database = await testDatabase(engine);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await database.drop();
  });

  it('carries the cryptogram of its first attempt', async () => {
    const oldKey = keyEntry('k1');
    const newKey = keyEntry('k2');
    // A retry an hour away: nothing but this test's own update makes it due while the first service runs.
    const before = await startTestService(
      engine,
      { VAULT_KEYS: oldKey, CREDENTIALS_RETRY_DELAYS_MS: '3600000' },
      { database },
    );
    const shop = await before.merchant({ webhookUrl: receiver.url, credentialTypes: ['NETWORK_TOKEN'] });
    const session = await before.session(shop.apiKey);
    receiver.respondWith(500);
    const ack = await before.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session, { merchantReference: 'rotation-1' }),
    });
    expect(ack.status).toBe(200);
    const first = await receiver.nth(1);
    await until(async () => {
      const lookup = await before.call('GET', `/payments/credentials/${ack.json.requestId}`, {
        apiKey: shop.apiKey,
      });
      return lookup.json.webhook.attempts.length === 1;
    });
    await before.close();

    // The operator's rotation: k2 becomes the primary key, every envelope is re-encrypted under it, and
    // k1 stays in the ring. The retry falls due now.
    const db = createDb(database.url);
    try {
      await reencryptAll(db, parseKeyRing(`${newKey},${oldKey}`));
      await db.kysely.updateTable('webhook_messages').set({ next_attempt_at: Date.now() }).execute();
    } finally {
      await db.close();
    }
    const after = await startTestService(engine, { VAULT_KEYS: `${newKey},${oldKey}` }, { database });
    try {
      const retried = await receiver.nth(2);
      expect(retried.headers['webhook-id']).toBe(first.headers['webhook-id']);
      const [firstEntry] = (JSON.parse(first.body) as PaymentCredentialsPayload).credentials;
      const [retriedEntry] = (JSON.parse(retried.body) as PaymentCredentialsPayload).credentials;
      expect(firstEntry?.type).toBe('NETWORK_TOKEN');
      expect(retriedEntry).toEqual(firstEntry);
      expect(retried.body).toBe(first.body);
    } finally {
      await after.close();
    }
  });
});
