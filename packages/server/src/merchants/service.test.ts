import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Actor, AuditTrail } from '../audit/index.js';
import { DomainError } from '../errors.js';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines, openTestDb } from '../test-support/db.js';
import { KeyRing } from '../vault/keyring.js';
import { WebhookDestinations } from '../webhooks/url-guard.js';
import { hashApiKey, Merchants } from './index.js';

const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe.each(engines())('merchants on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  let clock: number;
  let merchants: Merchants;
  const now = () => clock;

  beforeAll(async () => {
    handle = await openTestDb(engine);
    clock = 1_700_000_000_000;
    merchants = new Merchants({
      db: handle.db,
      keyRing,
      env: 'staging',
      now,
      webhookDestinations: new WebhookDestinations('staging', { loopback: true }),
    });
  });
  afterAll(() => handle.close());

  describe('accounts', () => {
    it('creates a merchant with defaults, one API key and one webhook secret', async () => {
      const created = await merchants.create({ name: '  Demo Shop ' }, TEST_ACTOR);
      expect(created.merchant).toEqual({
        id: expect.stringMatching(/^mch_[0-9A-Za-z]{22}$/),
        name: 'Demo Shop',
        webhookUrl: null,
        allowedOrigins: [],
        credentialTypes: [],
        variant: 'standard',
        authorizationMode: 'service',
        shippingMethods: [],
        taxSettings: { ratesByState: {} },
        rememberDevices: true,
        createdAt: clock,
      });
      expect(created.apiKey).toMatch(/^sk_test_[0-9A-Za-z]{32}$/);
      expect(created.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(await merchants.get(created.merchant.id)).toEqual(created.merchant);
    });

    it('stores every setting and normalizes origins', async () => {
      const { merchant } = await merchants.create(
        {
          name: 'Full',
          webhookUrl: 'https://shop.example/hooks?x=1',
          allowedOrigins: ['https://Shop.Example:443', 'http://localhost:5173', 'https://shop.example'],
          credentialTypes: ['PAN', 'NETWORK_TOKEN', 'PAN'],
          variant: 'connected',
          authorizationMode: 'merchant',
          shippingMethods: [
            { externalId: 'ground', name: 'Ground', price: 599 },
            { name: 'Pickup', price: 0 },
          ],
          taxSettings: { ratesByState: { TX: 825, OR: 0 } },
          rememberDevices: false,
        },
        TEST_ACTOR,
      );
      expect(merchant).toMatchObject({
        webhookUrl: 'https://shop.example/hooks?x=1',
        allowedOrigins: ['https://shop.example', 'http://localhost:5173'],
        credentialTypes: ['NETWORK_TOKEN', 'PAN'],
        variant: 'connected',
        authorizationMode: 'merchant',
        taxSettings: { ratesByState: { TX: 825, OR: 0 } },
        rememberDevices: false,
      });
      expect(merchant.shippingMethods[0]).toEqual({ externalId: 'ground', name: 'Ground', price: 599 });
      expect(merchant.shippingMethods[1]).toEqual({
        externalId: expect.any(String),
        name: 'Pickup',
        price: 0,
      });
      expect(await merchants.get(merchant.id)).toEqual(merchant);
      expect(Object.isFrozen(merchant.allowedOrigins)).toBe(true);
    });

    it.each([
      [{ name: '' }, /^name must be 1 to 200 characters/],
      [{ name: 'x'.repeat(201) }, /^name must be 1 to 200 characters/],
      [{ name: 42 }, /^name must be a string/],
      [{ name: 'A', webhookUrl: 'ftp://shop.example/x' }, /^webhookUrl must be an absolute http\(s\) URL/],
      [{ name: 'A', webhookUrl: '/relative' }, /^webhookUrl must be an absolute http\(s\) URL/],
      [{ name: 'A', webhookUrl: 'http:shop.example' }, /^webhookUrl must be an absolute http\(s\) URL/],
      [{ name: 'A', webhookUrl: 'https://u:p@shop.example/' }, /^webhookUrl must not contain a user name/],
      [
        { name: 'A', allowedOrigins: ['https://shop.example/checkout'] },
        /^allowedOrigins\[0\] must be scheme/,
      ],
      [{ name: 'A', allowedOrigins: ['https://a.example', 'shop.example'] }, /^allowedOrigins\[1\] must be/],
      [{ name: 'A', allowedOrigins: ['ftp://shop.example'] }, /^allowedOrigins\[0\] must be/],
      [{ name: 'A', allowedOrigins: 'https://shop.example' }, /^allowedOrigins must be an array/],
      [
        { name: 'A', credentialTypes: ['PAN', 'CVV'] },
        /^credentialTypes\[1\] must be one of NETWORK_TOKEN, PAN/,
      ],
      [{ name: 'A', variant: 'premium' }, /^variant must be one of standard, connected/],
      [{ name: 'A', authorizationMode: 'gateway' }, /^authorizationMode must be one of service, merchant/],
      [{ name: 'A', rememberDevices: 'off' }, /^rememberDevices must be true or false, got "off"/],
      [
        { name: 'A', shippingMethods: [{ name: 'Air', price: 5.5 }] },
        /^shippingMethods\[0\]\.price must be a whole/,
      ],
      [{ name: 'A', shippingMethods: [{ name: 'Air', price: -1 }] }, /^shippingMethods\[0\]\.price/],
      [{ name: 'A', shippingMethods: [{ name: '', price: 1 }] }, /^shippingMethods\[0\]\.name/],
      [
        {
          name: 'A',
          shippingMethods: [
            { externalId: 'a', name: 'A', price: 1 },
            { externalId: 'a', name: 'B', price: 1 },
          ],
        },
        /^shippingMethods\[1\]\.externalId must be unique/,
      ],
      [
        { name: 'A', taxSettings: { ratesByState: { TX: 10_001 } } },
        /^taxSettings\.ratesByState\.TX must be/,
      ],
      [{ name: 'A', taxSettings: { ratesByState: { TX: 8.25 } } }, /^taxSettings\.ratesByState\.TX must be/],
      [{ name: 'A', taxSettings: { ratesByState: { texas: 1 } } }, /^taxSettings\.ratesByState keys must be/],
      [{ name: 'A', taxSettings: {} }, /^taxSettings must be an object/],
    ])('refuses %j with a message naming the field', async (input, message) => {
      const error = await rejection(merchants.create(input as never, TEST_ACTOR));
      expect(error.errorCode).toBe('VALIDATION_ERROR');
      expect(error.status).toBe(400);
      expect(error.message).toMatch(message);
    });

    it('asks for https and a public host in production', async () => {
      const production = new Merchants({ db: handle.db, keyRing, env: 'production', now });
      for (const [webhookUrl, message] of [
        ['http://shop.example/hooks', /^webhookUrl must use https in production/],
        ['https://127.0.0.1/hooks', /^webhookUrl must not point to a loopback address \(production/],
        ['https://10.1.2.3/hooks', /^webhookUrl must not point to a private address \(production/],
        ['https://[::1]/hooks', /^webhookUrl must not point to a loopback address/],
        ['https://localhost:8443/hooks', /^webhookUrl must not point to a loopback address/],
        [
          'https://[64:ff9b::a00:1]/hooks',
          /^webhookUrl must not point to a private address .*64:ff9b::a00:1/,
        ],
      ] as const) {
        const error = await rejection(production.create({ name: 'Prod', webhookUrl }, TEST_ACTOR));
        expect(error.message).toMatch(message);
      }
      const { merchant } = await production.create(
        { name: 'Prod', webhookUrl: 'https://shop.example/h' },
        TEST_ACTOR,
      );
      expect(merchant.webhookUrl).toBe('https://shop.example/h');
      const literal = await production.create({ name: 'Prod', webhookUrl: 'https://8.8.8.8/h' }, TEST_ACTOR);
      expect(literal.merchant.webhookUrl).toBe('https://8.8.8.8/h');
      const http = await rejection(
        production.create(
          { name: 'Prod', allowedOrigins: ['https://shop.example', 'http://shop.example'] },
          TEST_ACTOR,
        ),
      );
      expect(http.message).toBe('allowedOrigins[1] must use https in production, got "http://shop.example"');
      const update = await rejection(
        production.update(merchant.id, { allowedOrigins: ['http://localhost:8000'] }, TEST_ACTOR),
      );
      expect(update.message).toMatch(/^allowedOrigins\[0\] must use https in production/);
      const secure = await production.create(
        { name: 'Prod', allowedOrigins: ['https://shop.example'] },
        TEST_ACTOR,
      );
      expect(secure.merchant.allowedOrigins).toEqual(['https://shop.example']);
      // Staging on a developer's machine (loopback on) takes a local receiver.
      const local = await merchants.create(
        { name: 'Dev', webhookUrl: 'http://127.0.0.1:3000/hooks', allowedOrigins: ['http://localhost:8000'] },
        TEST_ACTOR,
      );
      expect(local.merchant.webhookUrl).toBe('http://127.0.0.1:3000/hooks');
      expect(local.merchant.allowedOrigins).toEqual(['http://localhost:8000']);
      // Saved where http was allowed, it keeps working in production, and the start warns of it.
      expect(await production.productionWarnings()).toContain(
        `merchant ${local.merchant.id} allows http origins (http://localhost:8000); production accepts https origins only: list every origin it should keep, https, with npx wallet-checkout merchant update ${local.merchant.id} --origin https://… (one --origin each; they replace the list)`,
      );
      expect((await production.productionWarnings()).join()).not.toContain(secure.merchant.id);
    });

    it('lists, updates and approves', async () => {
      const { merchant } = await merchants.create({ name: 'Before' }, TEST_ACTOR);
      clock += 1000;
      const updated = await merchants.update(
        merchant.id,
        {
          name: 'After',
          webhookUrl: 'https://after.example/hooks',
          allowedOrigins: ['https://after.example'],
          variant: 'connected',
          authorizationMode: 'merchant',
          rememberDevices: false,
        },
        TEST_ACTOR,
      );
      expect(updated).toMatchObject({
        id: merchant.id,
        name: 'After',
        webhookUrl: 'https://after.example/hooks',
        allowedOrigins: ['https://after.example'],
        variant: 'connected',
        authorizationMode: 'merchant',
        rememberDevices: false,
        createdAt: merchant.createdAt,
      });
      expect((await merchants.update(merchant.id, { webhookUrl: null }, TEST_ACTOR)).webhookUrl).toBeNull();
      expect(await merchants.update(merchant.id, {}, TEST_ACTOR)).toEqual({ ...updated, webhookUrl: null });

      const approved = await merchants.approveCredentials(merchant.id, ['PAN', 'NETWORK_TOKEN'], TEST_ACTOR);
      expect(approved.credentialTypes).toEqual(['NETWORK_TOKEN', 'PAN']);
      const approvedAt = async () =>
        (
          await handle.db.kysely
            .selectFrom('merchants')
            .select('credentials_approved_at')
            .where('id', '=', merchant.id)
            .executeTakeFirstOrThrow()
        ).credentials_approved_at;
      expect(await approvedAt()).toBe(clock);
      const firstApproval = clock;
      clock += 1000;
      expect(await merchants.approveCredentials(merchant.id, ['PAN', 'NETWORK_TOKEN'], TEST_ACTOR)).toEqual(
        approved,
      );
      expect(await approvedAt()).toBe(firstApproval);
      const revoked = await merchants.approveCredentials(merchant.id, [], TEST_ACTOR);
      expect(revoked.credentialTypes).toEqual([]);

      const listed = await merchants.list();
      expect(listed.map((entry) => entry.id)).toContain(merchant.id);
      expect(listed.find((entry) => entry.id === merchant.id)).toEqual(revoked);
    });

    it('refuses bad updates and unknown merchants', async () => {
      const { merchant } = await merchants.create({ name: 'Strict' }, TEST_ACTOR);
      const bad = await rejection(merchants.update(merchant.id, { name: '' }, TEST_ACTOR));
      expect(bad.errorCode).toBe('VALIDATION_ERROR');
      expect(bad.message).toMatch(/^name must be/);
      const badTypes = await rejection(
        merchants.approveCredentials(merchant.id, ['CARD' as never], TEST_ACTOR),
      );
      expect(badTypes.message).toMatch(/^credentialTypes\[0\] must be one of/);

      expect(await merchants.get('mch_missing')).toBeUndefined();
      for (const attempt of [
        () => merchants.update('mch_missing', { name: 'X' }, TEST_ACTOR),
        () => merchants.update('mch_missing', {}, TEST_ACTOR),
        () => merchants.approveCredentials('mch_missing', ['PAN'], TEST_ACTOR),
        () => merchants.createApiKey('mch_missing', TEST_ACTOR),
        () => merchants.listApiKeys('mch_missing'),
        () => merchants.rotateWebhookSecret('mch_missing', TEST_ACTOR),
      ]) {
        const error = await rejection(attempt());
        expect(error.errorCode).toBe('MERCHANT_NOT_FOUND');
        expect(error.status).toBe(404);
      }
    });
  });

  describe('API keys', () => {
    it('stores the hash and a short prefix, never the key', async () => {
      const { merchant, apiKey } = await merchants.create({ name: 'Hashed' }, TEST_ACTOR);
      const second = await merchants.createApiKey(merchant.id, TEST_ACTOR);
      expect(second.id).toMatch(/^key_/);
      const rows = await handle.db.kysely
        .selectFrom('api_keys')
        .selectAll()
        .where('merchant_id', '=', merchant.id)
        .execute();
      expect(rows).toHaveLength(2);
      const stored = JSON.stringify(rows);
      for (const key of [apiKey, second.apiKey]) {
        expect(stored).not.toContain(key);
        expect(stored).not.toContain(key.slice(8));
        expect(rows.map((row) => row.hash)).toContain(hashApiKey(key));
      }
      expect(rows.map((row) => row.prefix).sort()).toEqual(
        [apiKey.slice(0, 12), second.apiKey.slice(0, 12)].sort(),
      );
    });

    it('authenticates several keys per merchant and refuses revoked, unknown and malformed ones', async () => {
      const { merchant, apiKey } = await merchants.create({ name: 'Keys' }, TEST_ACTOR);
      clock += 1;
      const second = await merchants.createApiKey(merchant.id, TEST_ACTOR);
      const usedAt = clock;
      expect((await merchants.authenticate(apiKey))?.id).toBe(merchant.id);
      expect((await merchants.authenticate(second.apiKey))?.id).toBe(merchant.id);

      clock += 1000;
      const revoked = await merchants.revokeApiKey(second.id, TEST_ACTOR);
      expect(revoked).toMatchObject({ id: second.id, merchantId: merchant.id, revokedAt: clock });
      // The entry cached by the call above is dropped at once.
      expect(await merchants.authenticate(second.apiKey)).toBeUndefined();
      expect((await merchants.authenticate(apiKey))?.id).toBe(merchant.id);

      // Revoking again keeps the first time.
      clock += 1000;
      expect((await merchants.revokeApiKey(second.id, TEST_ACTOR)).revokedAt).toBe(clock - 1000);

      const listed = await merchants.listApiKeys(merchant.id);
      expect(listed).toEqual([
        {
          id: expect.any(String),
          merchantId: merchant.id,
          prefix: apiKey.slice(0, 12),
          createdAt: expect.any(Number),
          revokedAt: null,
          lastUsedAt: usedAt,
        },
        {
          id: second.id,
          merchantId: merchant.id,
          prefix: second.apiKey.slice(0, 12),
          createdAt: expect.any(Number),
          revokedAt: clock - 1000,
          lastUsedAt: usedAt,
        },
      ]);
      expect(JSON.stringify(listed)).not.toContain(apiKey);

      for (const wrong of [
        '',
        'sk_test_',
        `${apiKey}x`,
        apiKey.slice(0, -1),
        `sk_test_${'A'.repeat(32)}`,
        `Bearer ${apiKey}`,
      ]) {
        expect(await merchants.authenticate(wrong)).toBeUndefined();
      }
      const unknown = await rejection(merchants.revokeApiKey('key_missing', TEST_ACTOR));
      expect(unknown.errorCode).toBe('API_KEY_NOT_FOUND');
    });

    it("refuses a key of the other environment's prefix", async () => {
      const production = new Merchants({ db: handle.db, keyRing, env: 'production', now });
      const live = await production.create({ name: 'Live' }, TEST_ACTOR);
      expect(live.apiKey).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
      expect((await production.authenticate(live.apiKey))?.id).toBe(live.merchant.id);
      // Same database, same stored hash: the staging service still refuses it, and the reverse.
      expect(await merchants.authenticate(live.apiKey)).toBeUndefined();
      const test = await merchants.create({ name: 'Test' }, TEST_ACTOR);
      expect(await production.authenticate(test.apiKey)).toBeUndefined();
    });

    it('serves later look-ups from memory and drops them on a local update', async () => {
      const { merchant, apiKey } = await merchants.create({ name: 'Cached' }, TEST_ACTOR);
      const first = await merchants.authenticate(apiKey);
      const [a, b] = await Promise.all([merchants.authenticate(apiKey), merchants.authenticate(apiKey)]);
      expect(a).toBe(first);
      expect(b).toBe(first);
      await merchants.approveCredentials(merchant.id, ['PAN'], TEST_ACTOR);
      expect((await merchants.authenticate(apiKey))?.credentialTypes).toEqual(['PAN']);
      await merchants.update(merchant.id, { name: 'Renamed' }, TEST_ACTOR);
      expect((await merchants.authenticate(apiKey))?.name).toBe('Renamed');
    });

    it('lets another process see a revoke within the cache lifetime', async () => {
      const other = new Merchants({ db: handle.db, keyRing, env: 'staging', now, cacheTtlMs: 5_000 });
      const { apiKey } = await merchants.create({ name: 'Two processes' }, TEST_ACTOR);
      const keyId =
        (await merchants.listApiKeys((await merchants.authenticate(apiKey))?.id ?? ''))[0]?.id ?? '';
      expect(await other.authenticate(apiKey)).toBeDefined();
      await merchants.revokeApiKey(keyId, TEST_ACTOR);
      expect(await merchants.authenticate(apiKey)).toBeUndefined();
      clock += 4_999;
      expect(await other.authenticate(apiKey)).toBeDefined();
      clock += 1;
      expect(await other.authenticate(apiKey)).toBeUndefined();
    });

    it('records when each key was last used, at most a minute behind, once a minute per process', async () => {
      const local = new Merchants({ db: handle.db, keyRing, env: 'staging', now, cacheTtlMs: 0 });
      const other = new Merchants({ db: handle.db, keyRing, env: 'staging', now, cacheTtlMs: 0 });
      const { merchant, apiKey } = await local.create({ name: 'Last used' }, TEST_ACTOR);
      const unused = await local.createApiKey(merchant.id, TEST_ACTOR);
      // Both keys may share their creation millisecond: the listing's order cannot tell them apart.
      const used = (await local.listApiKeys(merchant.id)).find((key) => key.id !== unused.id);
      const usedId = used?.id as string;
      const lastUsed = async () =>
        Object.fromEntries((await local.listApiKeys(merchant.id)).map((key) => [key.id, key.lastUsedAt]));
      expect(await lastUsed()).toEqual({ [usedId]: null, [unused.id]: null });

      const start = clock;
      await local.authenticate(apiKey);
      expect(await lastUsed()).toEqual({ [usedId]: start, [unused.id]: null });

      // Within its minute a process does not write again; another process writes its own first use.
      clock = start + 30_000;
      await local.authenticate(apiKey);
      expect((await lastUsed())[usedId]).toBe(start);
      await other.authenticate(apiKey);
      expect((await lastUsed())[usedId]).toBe(start + 30_000);
      clock = start + 59_999;
      await local.authenticate(apiKey);
      await other.authenticate(apiKey);
      expect((await lastUsed())[usedId]).toBe(start + 30_000);
      clock = start + 60_000;
      await local.authenticate(apiKey);
      expect((await lastUsed())[usedId]).toBe(start + 60_000);

      // A process whose clock is behind does not move the time back.
      clock = start + 45_000;
      const behind = new Merchants({ db: handle.db, keyRing, env: 'staging', now, cacheTtlMs: 0 });
      await behind.authenticate(apiKey);
      expect((await lastUsed())[usedId]).toBe(start + 60_000);

      // A revoked key is not counted as used.
      await local.revokeApiKey(usedId, TEST_ACTOR);
      clock = start + 600_000;
      expect(await local.authenticate(apiKey)).toBeUndefined();
      expect(await lastUsed()).toEqual({ [usedId]: start + 60_000, [unused.id]: null });
    });
  });

  describe('audit trail', () => {
    it('records every change with who made it, in its own transaction, and never a secret', async () => {
      const trail = new AuditTrail(handle.db);
      const after = (await trail.list({ limit: 1000 })).at(-1)?.seq ?? 0;
      const alice: Actor = 'operator:alice@ops1';
      const created = await merchants.create({ name: 'Audited', credentialTypes: ['PAN'] }, alice);
      const id = created.merchant.id;
      await merchants.update(id, { webhookUrl: 'https://audited.example/hooks', shippingMethods: [] }, alice);
      await merchants.approveCredentials(id, ['NETWORK_TOKEN', 'PAN'], TEST_ACTOR);
      await merchants.approveCredentials(id, [], TEST_ACTOR);
      // Asking for what it already has changes nothing, so leaves no event.
      await merchants.approveCredentials(id, [], TEST_ACTOR);
      const key = await merchants.createApiKey(id, alice);
      await merchants.revokeApiKey(key.apiKey, alice);
      const secret = await merchants.rotateWebhookSecret(id, alice, { overlapSeconds: 60 });
      // Refused changes leave no event.
      await rejection(merchants.update(id, { webhookUrl: 'ftp://nowhere' }, alice));
      await rejection(merchants.revokeApiKey('key_missing', alice));

      const events = await trail.list({ afterSeq: after, merchantId: id });
      expect(
        events.map(({ actor, action, subject, details }) => ({ actor, action, subject, details })),
      ).toEqual([
        {
          actor: alice,
          action: 'merchant.created',
          subject: null,
          details: {
            name: 'Audited',
            webhookUrl: null,
            allowedOrigins: [],
            variant: 'standard',
            authorizationMode: 'service',
            rememberDevices: true,
            credentialTypes: ['PAN'],
            apiKeyId: expect.stringMatching(/^key_/),
          },
        },
        {
          actor: alice,
          action: 'merchant.updated',
          subject: null,
          details: {
            changed: ['webhookUrl', 'shippingMethods'],
            webhookUrl: 'https://audited.example/hooks',
            previous: { webhookUrl: null },
          },
        },
        {
          actor: TEST_ACTOR,
          action: 'merchant.credentials_approved',
          subject: null,
          details: { credentialTypes: ['NETWORK_TOKEN', 'PAN'], previous: { credentialTypes: ['PAN'] } },
        },
        {
          actor: TEST_ACTOR,
          action: 'merchant.credentials_withdrawn',
          subject: null,
          details: { credentialTypes: [], previous: { credentialTypes: ['NETWORK_TOKEN', 'PAN'] } },
        },
        { actor: alice, action: 'api_key.created', subject: key.id, details: {} },
        {
          actor: alice,
          action: 'api_key.revoked',
          subject: key.id,
          details: { prefix: key.apiKey.slice(0, 12), revokedAt: clock },
        },
        { actor: alice, action: 'webhook_secret.rotated', subject: null, details: { overlapSeconds: 60 } },
      ]);
      const stored = JSON.stringify(await handle.db.kysely.selectFrom('audit_events').selectAll().execute());
      for (const value of [created.apiKey, key.apiKey, created.webhookSecret, secret]) {
        expect(stored).not.toContain(value);
      }
      expect(await trail.verify()).toMatchObject({ ok: true });
    });
  });
});
