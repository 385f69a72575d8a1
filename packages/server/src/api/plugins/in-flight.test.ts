/**
 * The count of requests being handled, which a stop waits for, goes back to zero after every kind of
 * answer: refusals by the router, by hooks and by the framework's body parsing, replays, and a request
 * whose client hung up while its handler still worked. Over real HTTP, with a webhook receiver that holds
 * its answer until told.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as httpRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { credentialsBody, startTestService, type TestService } from '../../test-support/service.js';
import { until } from '../../test-support/wait.js';

describe.each(engines())('requests in flight, on %s', (engine) => {
  let service: TestService;
  let receiver: http.Server;
  const held: http.ServerResponse[] = [];
  let shop: Awaited<ReturnType<TestService['merchant']>>;

  beforeAll(async () => {
    receiver = http.createServer((request, response) => {
      request.resume();
      held.push(response);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    service = await startTestService(engine, { BODY_LIMIT_BYTES: '1024' });
    const port = (receiver.address() as AddressInfo).port;
    shop = await service.merchant({ webhookUrl: `http://127.0.0.1:${port}/hooks` });
  });
  afterAll(async () => {
    await service?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('is back to zero once each answer is given, whatever refused the request', async () => {
    const session = await service.session(shop.apiKey);
    const auth = { authorization: `Bearer ${shop.apiKey}`, 'content-type': 'application/json' };
    const cases: Array<[string, Parameters<typeof httpRequest>[1], number]> = [
      ['/healthz', { method: 'GET' }, 200],
      ['/no-such-route', { method: 'GET' }, 404],
      ['/payments/credentials', { method: 'GET' }, 401],
      ['/payments/credentials', { method: 'DELETE', headers: auth }, 405],
      ['/orders/%E0%A4%A', { method: 'GET' }, 400],
      ['/orders/a%00b', { method: 'GET', headers: auth }, 400],
      ['/payments/credentials', { method: 'POST', body: '{}' }, 401],
      ['/payments/credentials', { method: 'POST', headers: auth, body: '{"amount":' }, 400],
      ['/payments/credentials', { method: 'POST', headers: auth, body: `"${'x'.repeat(4096)}"` }, 413],
    ];
    for (const [path, options, status] of cases) {
      const response = await httpRequest(`${service.url}${path}`, options);
      await response.body.dump();
      expect(response.statusCode, path).toBe(status);
      expect(service.inFlight.count, path).toBe(0);
    }
    const body = JSON.stringify(credentialsBody(session));
    const keyed = { ...auth, 'idempotency-key': `in-flight-${engine}` };
    for (const replayed of [undefined, 'true']) {
      const response = await httpRequest(`${service.url}/payments/credentials`, {
        method: 'POST',
        headers: keyed,
        body,
      });
      await response.body.dump();
      expect(response.headers['idempotent-replayed']).toBe(replayed);
      expect(service.inFlight.count).toBe(0);
    }
  });

  it('counts a request whose client hung up until its handler has finished', async () => {
    const before = held.length;
    const hangingUp = new AbortController();
    const testing = httpRequest(`${service.url}/webhooks/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.apiKey}` },
      signal: hangingUp.signal,
    });
    await until(async () => held.length > before);
    hangingUp.abort();
    await expect(testing).rejects.toThrow();
    expect(service.inFlight.count).toBe(1);
    held.at(-1)?.writeHead(204).end();
    await until(async () => service.inFlight.count === 0);
  });
});
