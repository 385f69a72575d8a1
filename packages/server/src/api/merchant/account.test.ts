import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OVERLAP_SECONDS } from '../../merchants/index.js';
import { engines } from '../../test-support/db.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../../test-support/service.js';

describe.each(engines())('the merchant account API on %s', (engine) => {
  let service: TestService;
  let first: Receiver;
  let moved: Receiver;

  beforeAll(async () => {
    service = await startTestService(engine);
    first = await startReceiver();
    moved = await startReceiver();
  });
  afterAll(async () => {
    await service.close();
    await first.close();
    await moved.close();
  });

  /** The audit trail's events about the merchant, newest first, as the merchant reads them. */
  const auditOf = async (apiKey: string) =>
    (await service.call('GET', '/audit-events', { apiKey })).json.data as {
      action: string;
      actor: string;
      apiKeyId: string | null;
    }[];

  it('shows the account its key belongs to, and no secret', async () => {
    const shop = await service.merchant({
      name: 'Account Shop',
      webhookUrl: first.url,
      allowedOrigins: ['https://shop.example'],
    });
    await service.merchant({ name: 'Someone Else' });
    const response = await service.call('GET', '/account', { apiKey: shop.apiKey });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      merchantId: shop.merchantId,
      name: 'Account Shop',
      webhookUrl: first.url,
      allowedOrigins: ['https://shop.example'],
      credentialTypes: ['NETWORK_TOKEN', 'PAN'],
      variant: 'standard',
      authorizationMode: 'service',
      rememberDevices: true,
      liveApiKeys: 1,
      olderWebhookSecretsUntil: [],
    });
    expect(response.text).not.toContain(shop.apiKey);
    expect(response.text).not.toContain(shop.webhookSecret);
    expect((await service.call('GET', '/account')).status).toBe(401);
  });

  it('moves webhooks to a new URL at once, and records which key did it', async () => {
    const shop = await service.merchant({ webhookUrl: first.url });
    const changed = await service.call('PATCH', '/account', {
      apiKey: shop.apiKey,
      body: { webhookUrl: moved.url, allowedOrigins: ['https://new.example'] },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({ webhookUrl: moved.url, allowedOrigins: ['https://new.example'] });

    const session = await service.session(shop.apiKey);
    const before = moved.received.length;
    const acknowledged = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session),
    });
    expect(acknowledged.status).toBe(200);
    const delivered = await moved.nth(before + 1);
    expect(verifiedBody<{ merchantId: string }>(shop.webhookSecret, delivered).merchantId).toBe(
      shop.merchantId,
    );
    expect(first.received.some((webhook) => webhook.body.includes(shop.merchantId))).toBe(false);

    const keyId = await service.services.merchants.apiKeyIdOf(shop.apiKey);
    const [event] = await auditOf(shop.apiKey);
    expect(event).toMatchObject({
      action: 'merchant.updated',
      actor: 'merchant',
      apiKeyId: keyId,
    });
  });

  it('changes shipping methods, tax rates and device memory, only the fields given', async () => {
    const shop = await service.merchant({ webhookUrl: first.url });
    const changed = await service.call('PATCH', '/account', {
      apiKey: shop.apiKey,
      body: {
        shippingMethods: [{ name: 'Ground', price: 599 }],
        taxSettings: { ratesByState: { TX: 825 } },
        rememberDevices: false,
      },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      webhookUrl: first.url,
      shippingMethods: [{ externalId: expect.any(String), name: 'Ground', price: 599 }],
      taxSettings: { ratesByState: { TX: 825 } },
      rememberDevices: false,
    });
    expect((await service.call('GET', '/account', { apiKey: shop.apiKey })).json).toEqual(changed.json);
  });

  it.each([
    [{ webhookUrl: 'ftp://hooks.example' }, /^webhookUrl must be an absolute http\(s\) URL/],
    [{ allowedOrigins: ['https://shop.example/path'] }, /^allowedOrigins\[0\]/],
    [{ shippingMethods: [{ name: 'Ground', price: -1 }] }, /^shippingMethods\[0\]\.price/],
    [{ credentialTypes: ['PAN'] }, /^body has an unknown field "credentialTypes"/],
    [{ name: 'Renamed' }, /^body has an unknown field "name"/],
    [{}, /^body must name a field/],
  ])('refuses %j with 400 naming the field, and changes nothing', async (body, message) => {
    const shop = await service.merchant({ webhookUrl: first.url });
    const refused = await service.call('PATCH', '/account', { apiKey: shop.apiKey, body });
    expect([refused.status, refused.json.errorCode]).toEqual([400, 'VALIDATION_ERROR']);
    expect(refused.json.errorMessage).toMatch(message);
    const account = (await service.call('GET', '/account', { apiKey: shop.apiKey })).json;
    expect(account).toMatchObject({
      name: 'Test Shop',
      webhookUrl: first.url,
      credentialTypes: ['NETWORK_TOKEN', 'PAN'],
    });
  });

  it('rotates the webhook secret: both sign during the overlap, and the old one stops when asked', async () => {
    const shop = await service.merchant({ webhookUrl: first.url });
    const rotated = await service.call('POST', '/account/webhook-secret/rotate', {
      apiKey: shop.apiKey,
      body: { overlapSeconds: 3600 },
    });
    expect(rotated.status, rotated.text).toBe(200);
    const { webhookSecret, olderWebhookSecretsUntil } = rotated.json;
    expect(webhookSecret).toMatch(/^whsec_/);
    expect(webhookSecret).not.toBe(shop.webhookSecret);
    expect(olderWebhookSecretsUntil).toHaveLength(1);
    expect(Date.parse(olderWebhookSecretsUntil[0]) - Date.now()).toBeGreaterThan(3500_000);

    const tested = first.received.length;
    expect((await service.call('POST', '/webhooks/test', { apiKey: shop.apiKey })).json.delivered).toBe(true);
    const signedByBoth = await first.nth(tested + 1);
    expect(String(signedByBoth.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifiedBody(webhookSecret, signedByBoth)).toBeTruthy();
    expect(verifiedBody(shop.webhookSecret, signedByBoth)).toBeTruthy();

    // After a leak: 0 stops every older secret at once.
    const leaked = await service.call('POST', '/account/webhook-secret/rotate', {
      apiKey: shop.apiKey,
      body: { overlapSeconds: 0 },
    });
    expect(leaked.json.olderWebhookSecretsUntil).toEqual([]);
    expect((await service.call('POST', '/webhooks/test', { apiKey: shop.apiKey })).json.delivered).toBe(true);
    const signedByNewest = await first.nth(tested + 2);
    expect(String(signedByNewest.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifiedBody(leaked.json.webhookSecret, signedByNewest)).toBeTruthy();
    expect(() => verifiedBody(webhookSecret, signedByNewest)).toThrow();

    expect((await auditOf(shop.apiKey)).map((event) => event.action).slice(0, 2)).toEqual([
      'webhook_secret.rotated',
      'webhook_secret.rotated',
    ]);
    const logs = service.logs.join('');
    for (const secret of [webhookSecret, leaked.json.webhookSecret]) expect(logs).not.toContain(secret);
  });

  it('rotates with the default overlap when sent no body, and refuses an overlap past the most', async () => {
    const shop = await service.merchant({ webhookUrl: first.url });
    const rotated = await service.call('POST', '/account/webhook-secret/rotate', { apiKey: shop.apiKey });
    expect(rotated.status, rotated.text).toBe(200);
    const overlapMs = Date.parse(rotated.json.olderWebhookSecretsUntil[0]) - Date.now();
    expect(overlapMs).toBeGreaterThan(23 * 3600_000);
    expect(overlapMs).toBeLessThanOrEqual(24 * 3600_000);
    const refused = await service.call('POST', '/account/webhook-secret/rotate', {
      apiKey: shop.apiKey,
      body: { overlapSeconds: 10 ** 9 },
    });
    expect([refused.status, refused.json.errorMessage]).toEqual([
      400,
      `overlapSeconds must be at most ${MAX_OVERLAP_SECONDS}`,
    ]);
  });
});
