/**
 * The count of requests being handled, which a stop waits for, goes back to zero after every kind of
 * answer: refusals by the router, by hooks and by the framework's body parsing, replays, and a request
 * whose client hung up while its handler still worked. Over real HTTP, with a webhook receiver that holds
 * its answer until told.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
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
    service = await startTestService(engine, { BODY_LIMIT_BYTES: '1024', REQUEST_TIMEOUT_MS: '1000' });
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

  it('answers a request that breaks HTTP mid-body with the error body, and counts it no more', async () => {
    const { port } = new URL(service.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      answer += chunk;
    });
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      'POST /payments/credentials HTTP/1.1\r\nHost: x\r\n' +
        `Authorization: Bearer ${shop.apiKey}\r\nContent-Type: application/json\r\n` +
        'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nZZ\r\n',
    );
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\nRequest-Id: req_\w+\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'The request is not valid HTTP/1.1 (HPE_INVALID_CHUNK_SIZE).',
    });
    await until(async () => service.inFlight.count === 0);
  });

  it('answers 408 with the error body to a client too slow to send its request, and counts it no more', async () => {
    const { port } = new URL(service.url);
    const started = Date.now();
    const answers = await Promise.all(
      [
        // Headers, then half the body it announced, then nothing.
        'POST /payments/credentials HTTP/1.1\r\nHost: x\r\n' +
          `Authorization: Bearer ${shop.apiKey}\r\nContent-Type: application/json\r\n` +
          'Content-Length: 40\r\n\r\n{"amount":',
        // Headers that never end.
        'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1',
      ].map(
        (sent) =>
          new Promise<string>((resolve) => {
            const socket = net.connect(Number(port), '127.0.0.1');
            let answer = '';
            socket.setEncoding('utf8').on('data', (chunk: string) => {
              answer += chunk;
            });
            socket.on('close', () => resolve(answer));
            socket.write(sent);
          }),
      ),
    );
    // REQUEST_TIMEOUT_MS is 1 s here, and Node looks for late requests every tenth of it: not its own
    // 30 s between looks, nor never.
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const answer of answers) {
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\nRequest-Id: req_\w+\r\n/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        errorCode: 'REQUEST_TIMEOUT',
        errorMessage: 'The request did not arrive whole in time; send it again.',
      });
    }
    await until(async () => service.inFlight.count === 0);
  });

  it('answers headers over the limit with 431 and the error body', async () => {
    const response = await httpRequest(`${service.url}/healthz`, {
      headers: { 'x-big': 'x'.repeat(20_000) },
    });
    expect(response.statusCode).toBe(431);
    expect(response.headers['request-id']).toMatch(/^req_/);
    expect(await response.body.json()).toEqual({
      errorCode: 'HEADERS_TOO_LARGE',
      errorMessage: 'The request headers are larger than the service accepts.',
    });
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
