import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.js';
import { TEST_SHOPPER_EMAIL } from '../../sandbox/seed.js';
import { engines, testDatabase } from '../../test-support/db.js';
import { startTestService, type TestService } from '../../test-support/service.js';
import { shopperLookupRoute } from './shoppers.lookup.js';
import { DEFAULT_LOOKUP_LIMITS } from './shoppers.rate-limit.js';

const SHOP = 'https://shop.example';

describe.each(engines())('rate limits of POST /checkout/shoppers/lookup on %s', (engine) => {
  let service: TestService;
  let merchantId: string;
  /**
   * The look-up route alone, with limits small enough to reach, on a service and database of its own:
   * the counters live in the database, and the other tests' look-ups must not count here.
   */
  let limitedService: TestService;
  let limited: FastifyInstance;
  let limitedUrl: string;
  let limitedMerchantId: string;
  let limitedOtherMerchantId: string;
  // Every 127.x.y.z address is this machine's loopback: one agent per address is one client per address.
  const clients = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'].map(
    (localAddress) => new Agent({ localAddress }),
  );

  const lookup = async (
    base: string,
    options: { client?: Agent; id?: string; origin?: string; email?: string; forwardedFor?: string } = {},
  ) => {
    const response = await request(`${base}/checkout/shoppers/lookup`, {
      method: 'POST',
      dispatcher: options.client,
      headers: {
        'content-type': 'application/json',
        origin: options.origin ?? SHOP,
        ...(options.forwardedFor ? { 'x-forwarded-for': options.forwardedFor } : {}),
      },
      body: JSON.stringify({
        merchantId: options.id ?? merchantId,
        email: options.email ?? TEST_SHOPPER_EMAIL,
      }),
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      json: (await response.body.json()) as Record<string, unknown>,
    };
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    ({ merchantId } = await service.merchant({ allowedOrigins: [SHOP] }));
    limitedService = await startTestService(engine);
    ({ merchantId: limitedMerchantId } = await limitedService.merchant({ allowedOrigins: [SHOP] }));
    ({ merchantId: limitedOtherMerchantId } = await limitedService.merchant({ allowedOrigins: [SHOP] }));
    const { services } = limitedService;
    limited = await buildApp({
      db: services.db,
      log: services.log,
      publicUrl: limitedService.url,
      bodyLimitBytes: services.config.bodyLimitBytes,
      merchants: services.merchants,
      idempotency: services.idempotency,
      credentials: services.credentials,
      externalResponses: services.externalResponses,
      routes: [
        shopperLookupRoute({ ...services, lookupLimits: { perClient: 3, perMerchant: 5, windowMs: 60_000 } }),
      ],
    });
    await limited.listen({ port: 0, host: '127.0.0.1' });
    const address = limited.server.address();
    limitedUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await limited.close();
    await Promise.all(clients.map((client) => client.close()));
    await limitedService.close();
    await service.close();
  });

  it(`answers ${DEFAULT_LOOKUP_LIMITS.perClient} look-ups a minute to one client, then 429 with Retry-After`, async () => {
    const [client] = clients;
    for (let n = 0; n < DEFAULT_LOOKUP_LIMITS.perClient; n++) {
      const answer = await lookup(service.url, { client, email: `shopper${n}@example.com` });
      expect(answer.status, `look-up ${n + 1}`).toBe(200);
    }
    const refused = await lookup(service.url, { client });
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      errorCode: 'RATE_LIMITED',
      errorMessage: expect.stringMatching(
        /^Too many shopper look-ups from this address \(at most 30 in 60 s\); retry in \d+ s\.$/,
      ),
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['access-control-allow-origin']).toBe(SHOP);
    expect(refused.headers['access-control-expose-headers']).toContain('retry-after');
    expect(refused.json).not.toHaveProperty('known');
  });

  it('limits each client address on its own', async () => {
    const [first, second] = clients;
    for (let n = 0; n < 3; n++)
      expect((await lookup(limitedUrl, { client: first, id: limitedOtherMerchantId })).status).toBe(200);
    expect((await lookup(limitedUrl, { client: first, id: limitedOtherMerchantId })).status).toBe(429);
    // Refused requests count too, so an address cannot probe on while it waits.
    expect(
      (await lookup(limitedUrl, { client: first, id: limitedMerchantId, origin: 'https://evil.example' }))
        .status,
    ).toBe(429);
    const other = await lookup(limitedUrl, { client: second, id: limitedOtherMerchantId });
    expect(other).toMatchObject({ status: 200, json: { known: true } });
  });

  it('limits one merchant across client addresses, counting only requests from its allowed origins', async () => {
    const [, second, third, fourth] = clients;
    for (let n = 0; n < 2; n++) {
      const foreign = { client: third, id: limitedMerchantId, origin: 'https://evil.example' };
      expect((await lookup(limitedUrl, foreign)).status).toBe(403);
    }
    const ours = (client: Agent | undefined) => lookup(limitedUrl, { client, id: limitedMerchantId });
    expect((await ours(third)).status).toBe(200);
    for (let n = 0; n < 3; n++) expect((await ours(fourth)).status).toBe(200);
    expect((await ours(second)).status).toBe(200);
    // The fifth look-up for this merchant was its last; this client is within its own limit (3rd request).
    const refused = await ours(second);
    expect(refused.status).toBe(429);
    expect(refused.json.errorMessage).toMatch(
      new RegExp(
        `^Too many shopper look-ups for merchant ${limitedMerchantId} \\(at most 5 in 60 s\\); retry in \\d+ s\\.$`,
      ),
    );
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('counts look-ups of every process on one database together', async () => {
    const database = await testDatabase(engine);
    const first = await startTestService(engine, {}, { database });
    const second = await startTestService(engine, {}, { database });
    try {
      const shop = await first.merchant({ allowedOrigins: [SHOP] });
      const [client] = clients;
      const half = DEFAULT_LOOKUP_LIMITS.perClient / 2;
      for (const instance of [first, second]) {
        for (let n = 0; n < half; n++) {
          expect((await lookup(instance.url, { client, id: shop.merchantId })).status).toBe(200);
        }
      }
      expect((await lookup(first.url, { client, id: shop.merchantId })).status).toBe(429);
      expect((await lookup(second.url, { client, id: shop.merchantId })).status).toBe(429);
    } finally {
      await second.close();
      await first.close();
      await database.drop();
    }
  });

  it('counts per client named by X-Forwarded-For only when the proxy is trusted (TRUST_PROXY)', async () => {
    const behindProxy = await startTestService(engine, { TRUST_PROXY: '127.0.0.1' });
    const untrusted = clients[3];
    try {
      const shop = await behindProxy.merchant({ allowedOrigins: [SHOP] });
      const from = (forwardedFor: string, client?: Agent) =>
        lookup(behindProxy.url, { id: shop.merchantId, forwardedFor, client });
      const limit = DEFAULT_LOOKUP_LIMITS.perClient;
      for (let n = 0; n < limit; n++) expect((await from('203.0.113.7')).status).toBe(200);
      expect((await from('203.0.113.7')).status).toBe(429);
      expect((await from('203.0.113.8')).status).toBe(200);
      // 127.0.0.5 is no trusted proxy: whatever it forwards, it is the client.
      for (let n = 0; n < limit; n++) expect((await from(`198.51.100.${n}`, untrusted)).status).toBe(200);
      expect((await from('198.51.100.200', untrusted)).status).toBe(429);
    } finally {
      await behindProxy.close();
    }
  });

  it('documents the limits and the 429 in the OpenAPI description', async () => {
    const response = await service.call('GET', '/openapi.json');
    const operation = response.json.paths['/checkout/shoppers/lookup'].post;
    expect(operation.description).toContain('at most 30 look-ups per client address');
    expect(operation.description).toContain('600 per merchant in 60 s');
    expect(operation.responses['429'].description).toContain('RATE_LIMITED');
  });
});
