import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from '../vault/keyring.js';
import { Merchants } from './index.js';

const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);
const HOUR = 3600_000;

describe.each(engines())('webhook secrets on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let clock: number;
  let merchants: Merchants;
  const now = () => clock;

  beforeAll(async () => {
    handle = await openTestDb(engine);
    clock = 1_700_000_000_000;
    merchants = new Merchants({ db: handle.db, keyRing, env: 'staging', now });
  });
  afterAll(() => handle.close());

  async function storedRows(merchantId: string) {
    return handle.db.kysely
      .selectFrom('webhook_secrets')
      .selectAll()
      .where('merchant_id', '=', merchantId)
      .execute();
  }

  it('makes a Standard Webhooks secret and stores it encrypted under the merchant id', async () => {
    const { merchant, webhookSecret } = await merchants.create({ name: 'Signed' }, TEST_ACTOR);
    expect(Buffer.from(webhookSecret.slice('whsec_'.length), 'base64')).toHaveLength(24);

    const rows = await storedRows(merchant.id);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    if (!row) throw new Error('no row');
    expect(row.expires_at).toBeNull();
    expect(JSON.stringify(rows)).not.toContain(webhookSecret.slice('whsec_'.length));
    expect(keyRing.keyIdOf(row.secret_ciphertext)).toBe('k1');
    expect(keyRing.open(row.secret_ciphertext, 'webhook_secrets.secret_ciphertext', merchant.id)).toBe(
      webhookSecret,
    );
    expect(() =>
      keyRing.open(row.secret_ciphertext, 'webhook_secrets.secret_ciphertext', 'mch_other'),
    ).toThrow();
    expect(() =>
      keyRing.open(row.secret_ciphertext, 'gateway_accounts.credentials_ciphertext', merchant.id),
    ).toThrow();

    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([webhookSecret]);
    const webhook = new Webhook(webhookSecret);
    const body = '{"eventName":"PAYMENT_CREDENTIALS"}';
    const timestamp = new Date();
    const signature = webhook.sign('msg_1', timestamp, body);
    expect(
      webhook.verify(body, {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      }),
    ).toEqual({ eventName: 'PAYMENT_CREDENTIALS' });
  });

  it('keeps the old secret signing during the overlap, then only the new one', async () => {
    const { merchant, webhookSecret: first } = await merchants.create({ name: 'Rotating' }, TEST_ACTOR);
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([first]);

    const second = await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR);
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([second, first]);

    // A delivery signed with both verifies with either secret.
    const body = '{"ok":true}';
    const at = new Date(clock);
    const signature = [first, second].map((secret) => new Webhook(secret).sign('msg_2', at, body)).join(' ');
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(Math.floor(clock / 1000)),
      'webhook-signature': signature,
    };
    for (const secret of [first, second]) {
      const webhook = new Webhook(secret);
      // The library checks the timestamp against the real clock; compare the signatures directly.
      expect(signature.split(' ')).toContain(webhook.sign('msg_2', at, body));
      expect(headers['webhook-signature']).toContain(',');
    }

    clock += 24 * HOUR - 1;
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([second, first]);
    clock += 1;
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([second]);

    const rows = await storedRows(merchant.id);
    expect(JSON.stringify(rows)).not.toContain(second.slice('whsec_'.length));
  });

  it('honours a shorter overlap, caps older secrets to it and prunes expired ones', async () => {
    const { merchant, webhookSecret: first } = await merchants.create({ name: 'Leaked' }, TEST_ACTOR);
    const second = await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR, { overlapSeconds: 3600 });
    clock += 1000;
    const third = await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR);
    // `first` keeps its 1 h expiry; the 24 h overlap of this rotation does not extend it.
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([third, second, first]);
    clock += HOUR;
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([third, second]);

    // After a leak: no overlap, the older secrets stop at once.
    const fourth = await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR, { overlapSeconds: 0 });
    expect(await merchants.activeWebhookSecrets(merchant.id)).toEqual([fourth]);
    clock += 1;
    await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR, { overlapSeconds: 0 });
    // Expired rows are deleted by the next rotation: only the last two remain.
    expect(await storedRows(merchant.id)).toHaveLength(2);
  });

  it('shows a rotation to another process within the cache lifetime', async () => {
    const other = new Merchants({ db: handle.db, keyRing, env: 'staging', now });
    const { merchant, webhookSecret: first } = await merchants.create({ name: 'Elsewhere' }, TEST_ACTOR);
    expect(await other.activeWebhookSecrets(merchant.id)).toEqual([first]);
    const second = await merchants.rotateWebhookSecret(merchant.id, TEST_ACTOR, { overlapSeconds: 60 });
    expect(await other.activeWebhookSecrets(merchant.id)).toEqual([first]);
    clock += 5_000;
    expect(await other.activeWebhookSecrets(merchant.id)).toEqual([second, first]);
  });

  it('refuses a bad overlap and answers [] for an unknown merchant', async () => {
    const { merchant } = await merchants.create({ name: 'Checks' }, TEST_ACTOR);
    for (const overlapSeconds of [-1, 1.5, 31 * 24 * 3600]) {
      const error = await merchants
        .rotateWebhookSecret(merchant.id, TEST_ACTOR, { overlapSeconds })
        .catch((e) => e);
      expect(error).toBeInstanceOf(DomainError);
      expect(error.errorCode).toBe('VALIDATION_ERROR');
      expect(error.message).toMatch(/^overlapSeconds must be/);
    }
    expect(await merchants.activeWebhookSecrets('mch_missing')).toEqual([]);
  });
});
