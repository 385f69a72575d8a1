import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Merchants } from '../merchants/index.js';
import { engines, openTestDb } from '../test-support/db.js';
import { parseKeyRing } from '../vault/keyring.js';
import { reencryptAll } from '../vault/rotate.js';
import { GatewayAccounts } from './accounts.js';

const OLD_KEY = `k1:${randomBytes(32).toString('base64')}`;
const NEW_KEY = `k2:${randomBytes(32).toString('base64')}`;

describe.each(engines())('gateway accounts on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let merchantId: string;
  const keyRing = parseKeyRing(OLD_KEY);
  const accounts = (env: 'staging' | 'production', ring = keyRing) =>
    new GatewayAccounts({ db: handle.db, keyRing: ring, env, sandboxGatewayUrl: 'http://127.0.0.1:4010' });

  beforeAll(async () => {
    handle = await openTestDb(engine);
    const merchants = new Merchants({ db: handle.db, keyRing, env: 'staging' });
    merchantId = (await merchants.create({ name: 'Shop' })).merchant.id;
  });
  afterAll(() => handle.close());

  it('gives a merchant without an account the sandbox gateway in staging, and nothing in production', async () => {
    const staging = await accounts('staging').gatewayOf(merchantId);
    expect(staging.connector.name).toBe('sandbox');
    expect(Object.keys(staging.credentials)).toEqual(['apiKey']);
    await expect(accounts('production').gatewayOf(merchantId)).rejects.toMatchObject({
      name: 'GatewayError',
      kind: 'configuration',
    });
  });

  it('keeps settings and encrypted credentials, and re-encrypts them on key rotation', async () => {
    const settings = { gateway: 'sandbox', style: 'xml', url: 'http://127.0.0.1:4999', timeoutMs: 2_000 };
    const account = await accounts('staging').set(merchantId, settings, { apiKey: 'sk_live_secret' });
    expect(account).toMatchObject({ merchantId, settings });
    const row = await handle.db.kysely.selectFrom('gateway_accounts').selectAll().executeTakeFirstOrThrow();
    expect(row.credentials_ciphertext).not.toContain('sk_live_secret');
    const gateway = await accounts('staging').gatewayOf(merchantId);
    expect(gateway.credentials.apiKey?.reveal()).toBe('sk_live_secret');

    const rotated = parseKeyRing(`${NEW_KEY},${OLD_KEY}`);
    await reencryptAll(handle.db, rotated);
    const after = await handle.db.kysely.selectFrom('gateway_accounts').selectAll().executeTakeFirstOrThrow();
    expect(rotated.keyIdOf(after.credentials_ciphertext)).toBe('k2');
    const onlyNew = parseKeyRing(NEW_KEY);
    expect((await accounts('staging', onlyNew).gatewayOf(merchantId)).credentials.apiKey?.reveal()).toBe(
      'sk_live_secret',
    );
  });

  it('refuses bad settings, and the sandbox gateway in production', async () => {
    await expect(accounts('staging').set(merchantId, { gateway: 'acme' }, {})).rejects.toMatchObject({
      errorCode: 'VALIDATION_ERROR',
      message: 'settings: gateway must be one of sandbox',
    });
    const sandbox = { gateway: 'sandbox', style: 'json', url: 'http://127.0.0.1:4010', timeoutMs: 1_000 };
    await expect(accounts('production').set(merchantId, sandbox, {})).rejects.toMatchObject({
      message: 'settings: production does not use the sandbox gateway',
    });
    await expect(accounts('production').gatewayOf(merchantId)).rejects.toMatchObject({
      kind: 'configuration',
    });
  });
});
