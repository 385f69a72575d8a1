import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Merchants } from '../merchants/index.js';
import { TEST_ACTOR } from '../test-support/actor.js';
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
    merchantId = (await merchants.create({ name: 'Shop' }, TEST_ACTOR)).merchant.id;
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
    const account = await accounts('staging').set(
      merchantId,
      settings,
      { apiKey: 'sk_live_secret' },
      TEST_ACTOR,
    );
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

  it('refuses bad settings when they are set', async () => {
    await expect(
      accounts('staging').set(merchantId, { gateway: 'acme' }, {}, TEST_ACTOR),
    ).rejects.toMatchObject({
      errorCode: 'VALIDATION_ERROR',
      message: 'settings: gateway must be one of sandbox',
    });
    const badUrl = { gateway: 'sandbox', style: 'json', url: 'nope', timeoutMs: 1_000 };
    await expect(accounts('staging').set(merchantId, badUrl, {}, TEST_ACTOR)).rejects.toMatchObject({
      errorCode: 'VALIDATION_ERROR',
      message: 'settings: sandbox gateway url is not a URL: nope',
    });
  });

  it('never hands out the sandbox gateway in production', async () => {
    const sandbox = { gateway: 'sandbox', style: 'json', url: 'http://127.0.0.1:4010', timeoutMs: 1_000 };
    await expect(accounts('production').set(merchantId, sandbox, {}, TEST_ACTOR)).rejects.toMatchObject({
      errorCode: 'VALIDATION_ERROR',
      message:
        'settings: production does not use the sandbox gateway; give the merchant an account at a real gateway',
    });
    // An account set while the service ran in staging is refused once it runs in production.
    await accounts('staging').set(merchantId, sandbox, { apiKey: 'sk_sandbox_1' }, TEST_ACTOR);
    await expect(accounts('production').gatewayOf(merchantId)).rejects.toMatchObject({
      name: 'GatewayError',
      kind: 'configuration',
      message: 'production does not use the sandbox gateway; give the merchant an account at a real gateway',
    });
    expect((await accounts('staging').gatewayOf(merchantId)).connector.name).toBe('sandbox');
  });

  it('shows the names of the credentials, never their values, and removes an account', async () => {
    const settings = { gateway: 'sandbox', style: 'json', url: 'http://127.0.0.1:4010', timeoutMs: 1_000 };
    const set = await accounts('staging').set(
      merchantId,
      settings,
      {
        apiKey: 'sk_gateway_secret_value',
        merchantCode: 'merchant-code-value',
      },
      TEST_ACTOR,
    );
    expect(set.credentialNames).toEqual(['apiKey', 'merchantCode']);
    expect(JSON.stringify(await accounts('staging').find(merchantId))).not.toMatch(
      /sk_gateway_secret_value|merchant-code-value/,
    );
    expect(await accounts('staging').remove(merchantId, TEST_ACTOR)).toBe(true);
    expect(await accounts('staging').find(merchantId)).toBeUndefined();
    expect(await accounts('staging').remove(merchantId, TEST_ACTOR)).toBe(false);
    // Without an account again: the staging default, and in production a clear refusal.
    expect((await accounts('staging').gatewayOf(merchantId)).credentials.apiKey?.reveal()).toBe(
      `sk_sandbox_${merchantId}`,
    );
    await expect(accounts('production').gatewayOf(merchantId)).rejects.toMatchObject({
      kind: 'configuration',
      message: `merchant ${merchantId} has no gateway account, and production does not fall back to the sandbox gateway; set one with "wallet-checkout gateway set"`,
    });
  });
});
