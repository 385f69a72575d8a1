/**
 * How the client repeats and reports failed calls, against a scripted HTTP server that stands in for the
 * service (the service boundary faked: the real service cannot be made to drop a connection or answer
 * 503 on cue). test/node/client.test.ts runs the client against the real service.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WalletCheckout } from './client.js';
import { WalletCheckoutConnectionError, WalletCheckoutError } from './errors.js';

/** An answer, a dropped connection, no answer, or 'stall': a 200 whose body starts and never ends. */
type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'drop' | 'hang' | 'stall';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const API_KEY = 'sk_test_scripted';
const OK: Answer = { status: 200, body: '{"code":200,"message":"OK","requestId":"crq_1"}' };
const error = (status: number, errorCode: string, headers?: Record<string, string>) => ({
  status,
  body: JSON.stringify({ errorCode, errorMessage: `${errorCode} from the stand-in` }),
  ...(headers && { headers }),
});
const credentials = {
  paymentId: 'pm_1',
  sessionId: 'ses_1',
  amount: 2599,
  merchantReference: 'order-1',
  currency: 'USD',
};

let servers: http.Server[] = [];

/** A server answering each request with the next of `answers` (200 OK once they run out). */
async function standIn(...answers: Answer[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = answers.shift() ?? OK;
      if (answer === 'hang') return;
      if (answer === 'stall') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"code":');
        return;
      }
      if (answer === 'drop') {
        request.socket.destroy();
        return;
      }
      response.writeHead(answer.status, {
        'content-type': 'application/json',
        'request-id': `req_${seen.length}`,
        ...answer.headers,
      });
      response.end(answer.body ?? '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

afterEach(async () => {
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

/** The error a call ends with; fails the test when it succeeds. */
async function failure(call: Promise<unknown>): Promise<Error> {
  return call.then(
    () => expect.fail('the call succeeded'),
    (caught: unknown) => caught as Error,
  );
}

describe('WalletCheckout against a stand-in for the service', () => {
  it('sends the API key, a JSON body and a new Idempotency-Key with a POST', async () => {
    const { url, seen } = await standIn(OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    expect(await wallet.payments.requestCredentials(credentials)).toEqual({
      code: 200,
      message: 'OK',
      requestId: 'crq_1',
    });
    const [request] = seen;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/payments/credentials');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(request?.body ?? '')).toEqual(credentials);
  });

  it('tells beside a POST’s answer whether it was a replay, its request id and its key, out of its JSON', async () => {
    const replay = { ...OK, headers: { 'idempotent-replayed': 'true' } };
    const { url, seen } = await standIn(OK, replay);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    const first = await wallet.payments.requestCredentials(credentials);
    const again = await wallet.payments.requestCredentials(credentials, {
      idempotencyKey: 'order-1-credentials',
    });
    expect(first.lastResponse).toEqual({
      status: 200,
      requestId: 'req_1',
      idempotencyKey: seen[0]?.headers['idempotency-key'],
      replayed: false,
    });
    expect(again.lastResponse).toEqual({
      status: 200,
      requestId: 'req_2',
      idempotencyKey: 'order-1-credentials',
      replayed: true,
    });
    expect(JSON.stringify(again)).toBe(OK.body);
    expect(Object.keys({ ...again })).toEqual(['code', 'message', 'requestId']);
  });

  it('sends a POST again after a 503 and a dropped connection, with the same Idempotency-Key', async () => {
    const { url, seen } = await standIn(error(503, 'UNAVAILABLE'), 'drop', OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    await wallet.payments.requestCredentials(credentials, { idempotencyKey: 'order-1-credentials' });
    expect(seen.map((request) => request.headers['idempotency-key'])).toEqual([
      'order-1-credentials',
      'order-1-credentials',
      'order-1-credentials',
    ]);
  });

  it('sends a request again after a 408: the service did not get it whole, so did nothing', async () => {
    const { url, seen } = await standIn(error(408, 'REQUEST_TIMEOUT'), OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    await wallet.payments.requestCredentials(credentials, { idempotencyKey: 'k-408' });
    expect(seen.map((request) => request.headers['idempotency-key'])).toEqual(['k-408', 'k-408']);
  });

  it('waits out a 429’s Retry-After before the next attempt', async () => {
    const { url, seen } = await standIn(error(429, 'RATE_LIMITED', { 'retry-after': '1' }), OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    const started = performance.now();
    await wallet.orders.get('ord_1');
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(seen).toHaveLength(2);
  });

  it('asks again while the first request with the key is in progress', async () => {
    const { url, seen } = await standIn(error(409, 'IDEMPOTENCY_REQUEST_IN_PROGRESS'), OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    await wallet.payments.requestCredentials(credentials, { idempotencyKey: 'k' });
    expect(seen).toHaveLength(2);
  });

  it('throws at once a refusal that would be refused again', async () => {
    for (const answer of [
      error(409, 'IDEMPOTENCY_KEY_REUSED'),
      error(400, 'INVALID_REQUEST'),
      error(429, 'RATE_LIMITED', { 'retry-after': '3600' }),
    ]) {
      const { url, seen } = await standIn(answer, OK);
      const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
      const thrown = await failure(wallet.payments.requestCredentials(credentials));
      expect(thrown).toBeInstanceOf(WalletCheckoutError);
      expect(thrown).toMatchObject({
        status: answer.status,
        errorCode: JSON.parse(answer.body).errorCode,
        requestId: 'req_1',
      });
      expect(seen).toHaveLength(1);
    }
  });

  it('gives up after maxRetries with the error of the last answer', async () => {
    const { url, seen } = await standIn(error(500, 'INTERNAL_ERROR'), error(500, 'INTERNAL_ERROR'));
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url, maxRetries: 1 });
    const thrown = await failure(wallet.orders.get('ord_1'));
    expect(thrown).toMatchObject({ status: 500, errorCode: 'INTERNAL_ERROR', requestId: 'req_2' });
    expect(seen).toHaveLength(2);
  });

  it('reports a service that never answers as a connection error carrying the Idempotency-Key', async () => {
    const { url, seen } = await standIn('hang', 'hang');
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url, timeoutMs: 200, maxRetries: 1 });
    const thrown = await failure(wallet.payments.requestCredentials(credentials, { idempotencyKey: 'k-1' }));
    expect(thrown).toBeInstanceOf(WalletCheckoutConnectionError);
    expect(thrown).toMatchObject({ idempotencyKey: 'k-1' });
    expect(thrown.message).toMatch(
      /POST \/payments\/credentials: no answer .* after 2 attempt\(s\): timed out/,
    );
    expect(seen).toHaveLength(2);
  });

  it('counts the answer’s body in the time-out: one that never ends is tried again', async () => {
    const { url, seen } = await standIn('stall', OK);
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url, timeoutMs: 300 });
    expect(await wallet.payments.requestCredentials(credentials)).toMatchObject({ requestId: 'crq_1' });
    expect(seen).toHaveLength(2);
  });

  it('reports an answer without the error body, such as a proxy’s, by its status', async () => {
    const { url } = await standIn({ status: 502, body: '<html>Bad Gateway</html>' });
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url, maxRetries: 0 });
    const thrown = await failure(wallet.orders.get('ord_1'));
    expect(thrown).toMatchObject({ status: 502, errorCode: 'HTTP_502' });
    expect(thrown.message).toContain('Bad Gateway');
  });

  it('keeps the base URL’s path and one id to one path segment', async () => {
    const { url, seen } = await standIn({ status: 200, body: '{}' });
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: `${url}/wallet/` });
    await wallet.orders.get('../audit-events?x=1');
    expect(seen[0]?.url).toBe('/wallet/orders/..%2Faudit-events%3Fx%3D1');
  });

  it('follows the pages of a list from the last item’s cursor', async () => {
    const { url, seen } = await standIn(
      { status: 200, body: JSON.stringify({ data: [{ seq: 9 }, { seq: 7 }], hasMore: true }) },
      { status: 200, body: JSON.stringify({ data: [{ seq: 4 }], hasMore: false }) },
    );
    const wallet = new WalletCheckout({ apiKey: API_KEY, baseUrl: url });
    const seqs: number[] = [];
    for await (const event of wallet.auditEvents.list({ limit: 2 })) seqs.push(event.seq);
    expect(seqs).toEqual([9, 7, 4]);
    expect(seen.map((request) => request.url)).toEqual([
      '/audit-events?limit=2',
      '/audit-events?limit=2&startingAfter=7',
    ]);
  });

  it('refuses options it cannot work with, naming them', () => {
    expect(() => new WalletCheckout({ apiKey: 'pk_123', baseUrl: 'https://wallet.example' })).toThrow(
      /apiKey/,
    );
    expect(() => new WalletCheckout({ apiKey: API_KEY, baseUrl: 'wallet.example' })).toThrow(/baseUrl/);
    expect(() => new WalletCheckout({ apiKey: API_KEY, baseUrl: 'ftp://wallet.example' })).toThrow(/baseUrl/);
    expect(
      () => new WalletCheckout({ apiKey: API_KEY, baseUrl: 'https://wallet.example', maxRetries: -1 }),
    ).toThrow(/maxRetries/);
    expect(
      () => new WalletCheckout({ apiKey: API_KEY, baseUrl: 'https://wallet.example', timeoutMs: 0 }),
    ).toThrow(/timeoutMs/);
  });
});
