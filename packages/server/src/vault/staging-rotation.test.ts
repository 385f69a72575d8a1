import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CredentialEntry, PaymentCredentialsPayload } from '../payments/types.js';
import { json, runCli } from '../test-support/cli.js';
import { engines, type TestDatabase, testDatabase } from '../test-support/db.js';
import {
  type ReceivedWebhook,
  type Receiver,
  startReceiver,
  verifiedBody,
} from '../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';

describe.each(engines())('`vault rotate-key` while a staging service runs, on %s', (engine) => {
  let database: TestDatabase;
  let receiver: Receiver;
  let service: TestService;

  beforeAll(async () => {
    database = await testDatabase(engine);
    receiver = await startReceiver();
    // No VAULT_KEYS: the staging key file in the data folder, which the CLI rotates.
    service = await startTestService(engine, {}, { database });
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
    await database.drop();
  });

  it('goes on delivering card data: the running service reads the rotated key file', async () => {
    const shop = await service.merchant({
      webhookUrl: receiver.url,
      credentialTypes: ['NETWORK_TOKEN', 'PAN'],
    });
    const session = await service.session(shop.apiKey);
    const opened = (webhook: ReceivedWebhook) =>
      verifiedBody<PaymentCredentialsPayload>(shop.webhookSecret, webhook);
    const requestCredentials = async (merchantReference: string) => {
      const response = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session, { merchantReference }),
      });
      expect(response.status).toBe(200);
      return response.json.requestId as string;
    };

    await requestCredentials('before-rotation');
    const before = opened(await receiver.nth(1));

    const rotation = json(
      await runCli({ DATABASE_URL: database.url, DATA_DIR: database.dataDir }, [
        'vault',
        'rotate-key',
        '--json',
      ]),
    ) as { primaryKeyId: string; reencrypted: number };
    expect(rotation.reencrypted).toBeGreaterThanOrEqual(3);

    const requestId = await requestCredentials('after-rotation');
    const after = opened(await receiver.nth(2));
    const entries = (payload: PaymentCredentialsPayload) =>
      Object.fromEntries(payload.credentials.map((entry: CredentialEntry) => [entry.type, entry]));
    const [was, now] = [entries(before), entries(after)];
    expect(now.PAN).toEqual(was.PAN);
    expect(now.NETWORK_TOKEN).toMatchObject({
      type: 'NETWORK_TOKEN',
      token: (was.NETWORK_TOKEN as { token: string }).token,
    });
    const view = await until(async () => {
      const found = await service.call('GET', `/payments/credentials/${requestId}`, { apiKey: shop.apiKey });
      return found.json.state !== 'ACKNOWLEDGED' && found.json;
    });
    expect(view).toMatchObject({ state: 'DELIVERED', failureReason: null });
  });
});
