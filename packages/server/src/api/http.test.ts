import net from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ACTOR } from '../test-support/actor.js';
import { engines } from '../test-support/db.js';
import { startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { DOCS_CSP } from './docs.js';

/** The parts of /openapi.json these tests read. */
interface OpenApiOperation {
  operationId?: string;
  security?: object[];
  responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
}
type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;
interface OpenApiDocument {
  paths: OpenApiPaths;
  webhooks: OpenApiPaths;
  components: {
    headers: Record<string, unknown>;
    responses: Record<string, OpenApiOperation['responses'][string]>;
  };
}

/** How the service answers what is wrong at the HTTP level, before any domain code runs. */
describe.each(engines())('HTTP edges on %s', (engine) => {
  let service: TestService;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService(engine, { BODY_LIMIT_BYTES: '2048' });
    ({ apiKey } = await service.merchant({ webhookUrl: 'http://127.0.0.1:9/hooks' }));
  });
  afterAll(() => service.close());

  it.each([
    [
      'malformed JSON',
      { rawBody: '{"amount": ', headers: { 'content-type': 'application/json' } },
      400,
      'INVALID_JSON',
    ],
    [
      'an empty JSON body',
      { rawBody: '', headers: { 'content-type': 'application/json' } },
      400,
      'INVALID_JSON',
    ],
    [
      'a form body',
      { rawBody: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a text/plain body',
      { rawBody: '{}', headers: { 'content-type': 'text/plain' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a field named __proto__',
      { rawBody: '{"__proto__":{"amount":1}}', headers: { 'content-type': 'application/json' } },
      400,
      'VALIDATION_ERROR',
    ],
    [
      'a gzip-encoded body',
      { rawBody: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } },
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a JSON array',
      { rawBody: '[]', headers: { 'content-type': 'application/json' } },
      400,
      'VALIDATION_ERROR',
    ],
    [
      'a body over the limit',
      { rawBody: JSON.stringify({ pad: 'x'.repeat(4096) }), headers: { 'content-type': 'application/json' } },
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ])('answers %s with the error body', async (_name, options, status, code) => {
    const response = await service.call('POST', '/payments/credentials', { apiKey, ...options });
    expect(response.status).toBe(status);
    expect(response.json.errorCode).toBe(code);
    expect(typeof response.json.errorMessage).toBe('string');
    expect(response.headers['request-id']).toMatch(/^req_/);
  });

  it.each([
    ['{"__proto__":{"admin":true}}', '__proto__'],
    ['{"paymentId":"p","nested":{"constructor":{"prototype":{}}}}', 'nested.constructor'],
  ])('refuses prototype-poisoning field names in %s, naming the field', async (rawBody, field) => {
    const headers = { 'content-type': 'application/json' };
    const response = await service.call('POST', '/payments/credentials', { apiKey, rawBody, headers });
    expect(response.status).toBe(400);
    expect(response.json.errorMessage).toMatch(new RegExp(`^${field} is not allowed: a field named`));
  });

  it('reads JSON as UTF-8 only: another charset is refused by name, UTF-8 spelled any way is taken', async () => {
    const body = JSON.stringify({ pad: 'x' });
    const refused = await service.call('POST', '/payments/credentials', {
      apiKey,
      rawBody: body,
      headers: { 'content-type': 'application/json; charset=utf-16' },
    });
    expect([refused.status, refused.json]).toEqual([
      415,
      {
        errorCode: 'UNSUPPORTED_MEDIA_TYPE',
        errorMessage: 'header Content-Type charset "utf-16" is not supported; send UTF-8',
      },
    ]);
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf8"']) {
      const taken = await service.call('POST', '/payments/credentials', {
        apiKey,
        rawBody: body,
        headers: { 'content-type': type },
      });
      // Past the parser: the schema names the first missing field.
      expect([type, taken.status, taken.json.errorCode]).toEqual([type, 400, 'VALIDATION_ERROR']);
    }
  });

  it('takes an empty JSON body where a route takes no body, as from a client that always sets the type', async () => {
    const headers = { 'content-type': 'application/json' };
    const tested = await service.call('POST', '/webhooks/test', { apiKey, rawBody: '', headers });
    expect([tested.status, tested.json.webhookId]).toEqual([200, expect.stringMatching(/^tst_/)]);
    const malformed = await service.call('POST', '/webhooks/test', { apiKey, rawBody: '{', headers });
    expect([malformed.status, malformed.json.errorCode]).toEqual([400, 'INVALID_JSON']);
  });

  it('answers an unknown route with NOT_FOUND naming it', async () => {
    const response = await service.call('GET', '/nothing/here?x=1');
    expect(response.status).toBe(404);
    expect(response.json).toEqual({ errorCode: 'NOT_FOUND', errorMessage: 'No route GET /nothing/here.' });
  });

  it('answers NOT_FOUND for a file a route of files does not have, whatever the route takes', async () => {
    for (const path of ['/docs/static/nothing.js', '/checkout/assets/nothing.js']) {
      const response = await service.call('GET', path);
      expect([path, response.status, response.json]).toEqual([
        path,
        404,
        { errorCode: 'NOT_FOUND', errorMessage: `No route GET ${path}.` },
      ]);
    }
  });

  it('answers a method the route does not take with METHOD_NOT_ALLOWED and the methods it does', async () => {
    const wrong = await service.call('GET', '/payments/externalresponse', { apiKey });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(wrong.json).toEqual({
      errorCode: 'METHOD_NOT_ALLOWED',
      errorMessage: '/payments/externalresponse does not take GET; it takes POST.',
    });
    const withParameter = await service.call('POST', '/payments/credentials/crq_x/', { apiKey, body: {} });
    expect(withParameter.status).toBe(405);
    expect(String(withParameter.headers.allow).split(', ')).toContain('GET');
  });

  it('answers an HTTP/1.1 request without Host with the error body; HTTP/1.0 needs none', async () => {
    const exchange = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(new URL(service.url).port), '127.0.0.1');
        let answer = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => {
          answer += chunk;
        });
        socket.on('error', reject).on('close', () => resolve(answer));
        socket.write(`${head}\r\nConnection: close\r\n\r\n`);
      });
    const missing = await exchange('GET /healthz HTTP/1.1');
    expect(missing).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(missing).toMatch(/\r\nrequest-id: req_\w+\r\n/i);
    expect(JSON.parse(missing.slice(missing.indexOf('\r\n\r\n') + 4))).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'header Host is required in HTTP/1.1 (RFC 9112, section 3.2)',
    });
    expect(await exchange('GET /healthz HTTP/1.0')).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('answers a URL that is not validly percent-encoded with the error body', async () => {
    const response = await service.call('GET', '/payments/credentials/%ZZ', { apiKey });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'the URL path is not validly percent-encoded',
    });
  });

  it.each([
    [
      'a body field',
      'POST',
      '/payments/credentials',
      { paymentId: 'a\u0000b' },
      'paymentId must not contain',
    ],
    [
      'a field name',
      'POST',
      '/payments/credentials',
      { a: [{ 'x\u0000': 1 }] },
      'a[0] has a field name with',
    ],
    [
      'the query',
      'GET',
      '/payments/credentials?merchantReference=a%00',
      undefined,
      'the URL must not contain %00',
    ],
    ['the path', 'GET', '/payments/credentials/crq_%00', undefined, 'the URL must not contain %00'],
  ] as const)(
    'refuses a NUL character in %s, on every engine alike',
    async (_name, method, path, body, rule) => {
      const response = await service.call(method, path, { apiKey, body });
      expect(response.status).toBe(400);
      expect(response.json.errorCode).toBe('VALIDATION_ERROR');
      expect(response.json.errorMessage).toBe(
        rule.startsWith('the URL') ? `${rule} (U+0000)` : `${rule} the NUL character (U+0000)`,
      );
      expect(response.headers['request-id']).toMatch(/^req_/);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it.each([
    ['/orders?limit=1&limit=2', 'limit'],
    ['/webhooks/messages?state=FAILED&state=DELIVERED', 'state'],
  ])('refuses a query parameter given twice, naming it: %s', async (path, name) => {
    const response = await service.call('GET', path, { apiKey });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: `query parameter ${name} must be given once`,
    });
  });

  it.each([
    ['/payments/credentials?merchantRef=order-1', 'merchantRef'],
    ['/webhooks/messages?status=FAILED&status=DELIVERED', 'status'],
    ['/orders?limit=1&pge=2', 'pge'],
  ])('names a query parameter the route does not take, even beside a missing one: %s', async (path, name) => {
    const response = await service.call('GET', path, { apiKey });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: `query parameter ${name} is not one this route takes`,
    });
  });

  it('never repeats a card number the client put where an id goes', async () => {
    const pan = '4111111111111111';
    const lookup = await service.call('GET', `/payments/credentials/${pan}`, { apiKey });
    const route = await service.call('GET', `/no/${pan}`, { apiKey });
    for (const response of [lookup, route]) {
      expect(response.status).toBe(404);
      expect(response.json.errorMessage).toContain('[card-number]');
      expect(JSON.stringify(response.json)).not.toContain(pan);
    }
  });

  it('refuses an unpaired surrogate in a string or a field name, and takes a paired one', async () => {
    const raw = (text: string) =>
      service.call('POST', '/payments/credentials', {
        apiKey,
        headers: { 'content-type': 'application/json' },
        rawBody: text,
      });
    const lone = await raw('{"merchantReference":"sur\\ud800x"}');
    expect(lone.status).toBe(400);
    expect(lone.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage:
        'merchantReference must be valid Unicode: it holds an unpaired surrogate (\\ud800–\\udfff)',
    });
    const trailing = await raw('{"a":{"\\udc00":1}}');
    expect(trailing.json.errorMessage).toBe(
      'a has a field name that is not valid Unicode (an unpaired surrogate)',
    );
    // A pair (here 😀) is a character like any other: the body reaches validation of its fields.
    const paired = await raw('{"merchantReference":"\\ud83d\\ude00"}');
    expect(paired.status).toBe(400);
    expect(paired.json.errorMessage).not.toContain('Unicode');
  });

  it('refuses a body nested deeper than 32 levels and leaves its Idempotency-Key free', async () => {
    const headers = { 'idempotency-key': 'deep-1' };
    const deep = await service.call('POST', '/sandbox/sessions', {
      apiKey,
      headers: { ...headers, 'content-type': 'application/json' },
      rawBody: `{"extra":${'['.repeat(40)}${']'.repeat(40)}}`,
    });
    expect(deep.status).toBe(400);
    expect(deep.json).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'body must not be nested more than 32 levels deep',
    });
    const shallow = await service.call('POST', '/sandbox/sessions', { apiKey, headers, body: {} });
    expect(shallow.status).toBe(200);
    expect(shallow.json.sessionId).toEqual(expect.any(String));
  });

  it('takes the authorization scheme in any case', async () => {
    const response = await service.call('POST', '/sandbox/sessions', {
      body: {},
      headers: { authorization: `bearer ${apiKey}` },
    });
    expect(response.status).toBe(200);
  });

  it('replays one Idempotency-Key by any path that serves the same operation', async () => {
    const session = await service.session(apiKey);
    const body = {
      paymentId: session.paymentMethods[0]?.paymentId,
      sessionId: session.sessionId,
      amount: 100,
      merchantReference: 'alias-1',
      currency: 'USD',
    };
    const headers = { 'idempotency-key': 'alias-1' };
    const first = await service.call('POST', '/payments/credentials', { apiKey, headers, body });
    expect(first.status).toBe(200);
    for (const path of ['/payment/credentials', '/payments/credentials/']) {
      const again = await service.call('POST', path, { apiKey, headers, body });
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json.requestId).toBe(first.json.requestId);
    }
  });

  it('checks the key before the body', async () => {
    const response = await service.call('POST', '/payments/credentials', { body: {} });
    expect(response.status).toBe(401);
  });

  it('logs each refused key with its first characters only, why, and where it came from', async () => {
    const revoked = await service.merchant({ name: 'Revoked' });
    const key = await service.services.merchants.revokeApiKey(revoked.apiKey, TEST_ACTOR);
    const unknown = `sk_test_${'U'.repeat(32)}`;
    const live = `sk_live_${'L'.repeat(32)}`;
    const calls = [
      { apiKey: revoked.apiKey },
      { apiKey: unknown },
      { apiKey: live },
      { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      {},
    ];
    for (const options of calls) {
      expect((await service.call('GET', '/webhooks/messages', options)).status).toBe(401);
    }
    const refused = await until(async () => {
      const lines = service.logs
        .flatMap((chunk) => chunk.split('\n'))
        .filter((line) => line.includes('refused a merchant API request'))
        .map((line) => JSON.parse(line));
      return lines.length >= calls.length && lines.slice(-calls.length);
    });
    const where = {
      level: 40,
      ip: '127.0.0.1',
      method: 'GET',
      route: '/webhooks/messages',
      requestId: expect.any(String),
    };
    expect(refused).toEqual([
      expect.objectContaining({
        ...where,
        reason: 'revoked key',
        merchantId: revoked.merchantId,
        keyId: key.id,
        keyPrefix: revoked.apiKey.slice(0, 12),
      }),
      expect.objectContaining({ ...where, reason: 'unknown key', keyPrefix: 'sk_test_UUUU' }),
      expect.objectContaining({ ...where, reason: 'a production key', keyPrefix: 'sk_live_LLLL' }),
      expect.objectContaining({ ...where, reason: 'not a Bearer key' }),
      expect.objectContaining({ ...where, reason: 'no Authorization header' }),
    ]);
    expect(refused[1].merchantId).toBeUndefined();
    for (const whole of [revoked.apiKey, unknown, live]) expect(service.logs.join('')).not.toContain(whole);
  });

  it('serves the singular /payment/credentials spelling', async () => {
    const response = await service.call('POST', '/payment/credentials', { apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.json.errorMessage).toBe('paymentId is required');
  });

  it('refuses an Idempotency-Key that is not printable ASCII', async () => {
    const response = await service.call('POST', '/sandbox/sessions', {
      apiKey,
      body: {},
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    expect(response.status).toBe(400);
    expect(response.json.errorMessage).toBe('header Idempotency-Key must be at most 255 characters long');
  });

  it('refuses an Idempotency-Key sent twice, naming the rule, and keeps neither key', async () => {
    const response = await request(`${service.url}/sandbox/sessions`, {
      method: 'POST',
      headers: [
        'authorization',
        `Bearer ${apiKey}`,
        'content-type',
        'application/json',
        'idempotency-key',
        'twice-a',
        'Idempotency-Key',
        'twice-b',
      ],
      body: '{}',
    });
    expect(response.statusCode).toBe(400);
    const answer = (await response.body.json()) as { errorCode: string; errorMessage: string };
    expect(answer).toEqual({
      errorCode: 'VALIDATION_ERROR',
      errorMessage: 'header Idempotency-Key must be sent once, not 2 times',
    });
    const once = await service.call('POST', '/sandbox/sessions', {
      apiKey,
      body: {},
      headers: { 'idempotency-key': 'twice-a' },
    });
    expect(once.status).toBe(200);
    expect(once.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses an Authorization header sent twice, though each names a valid key', async () => {
    const response = await request(`${service.url}/payments/credentials?merchantReference=twice`, {
      headers: ['authorization', `Bearer ${apiKey}`, 'Authorization', `Bearer ${apiKey}`],
    });
    expect(response.statusCode).toBe(401);
    expect(await response.body.json()).toEqual({
      errorCode: 'UNAUTHORIZED',
      errorMessage: 'The Authorization header must be sent once, not 2 times.',
    });
    const emptyFirst = await request(`${service.url}/payments/credentials?merchantReference=twice`, {
      headers: ['authorization', '', 'Authorization', `Bearer ${apiKey}`],
    });
    expect(((await emptyFirst.body.json()) as { errorMessage: string }).errorMessage).toBe(
      'The Authorization header must be sent once, not 2 times.',
    );
  });

  it('gives a fresh Request-Id to every response', async () => {
    const [a, b] = await Promise.all([service.call('GET', '/healthz'), service.call('GET', '/healthz')]);
    expect(a.headers['request-id']).not.toBe(b.headers['request-id']);
    expect(a.json).toEqual({ status: 'ok', database: 'ok' });
  });

  it('documents every route in /openapi.json, with the error codes', async () => {
    const response = await service.call('GET', '/openapi.json');
    expect(response.status).toBe(200);
    const paths = Object.keys(response.json.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/payments/credentials',
        '/payments/externalresponse',
        '/payments/credentials/{requestId}',
        '/webhooks/messages',
        '/healthz',
      ]),
    );
    const credentials = response.json.paths['/payments/credentials'].post;
    expect(credentials.responses['404'].description).toContain('SESSION_NOT_FOUND');
    expect(credentials.responses['403'].description).toContain('MERCHANT_NOT_APPROVED');
    expect(credentials.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/CredentialsRequestInput',
    });
    const docs = await service.call('GET', '/docs/');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('<html');
  });

  it('documents a 400 on every operation that validates a parameter or a body', async () => {
    const { paths } = (await service.call('GET', '/openapi.json')).json as {
      paths: Record<
        string,
        Record<string, { parameters?: unknown[]; requestBody?: unknown; responses: object }>
      >;
    };
    const undocumented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => (operation.parameters?.length ?? 0) > 0 || operation.requestBody)
        .filter(([, operation]) => !('400' in operation.responses))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undocumented).toEqual([]);
    const withoutSuccess = Object.entries(paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !Object.keys(operation.responses).some((status) => /^[23]/.test(status)))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(withoutSuccess).toEqual([]);
  });

  it('names every operation, webhooks included, with its own camelCase operationId', async () => {
    const document = (await service.call('GET', '/openapi.json')).json as OpenApiDocument;
    const operations = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap(
      (item) => Object.values(item),
    );
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z]*$/.test(id ?? ''))).toEqual([]);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect(document.paths['/payments/credentials']?.post?.operationId).toBe('requestPaymentCredentials');
    expect(document.paths['/payments/externalresponse']?.post?.operationId).toBe('reportExternalResponse');
    // The singular aliases of the credentials flow stay out of the document, so need no ids of their own.
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/payment/'))).toEqual([]);
  });

  it('describes every answer, with Request-Id, Retry-After on 429 and 503, Idempotent-Replayed on idempotent routes', async () => {
    const document = (await service.call('GET', '/openapi.json')).json as OpenApiDocument;
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    expect(Object.keys(document.components.headers)).toEqual(
      expect.arrayContaining(['Request-Id', 'Retry-After', 'Idempotent-Replayed', 'Allow']),
    );
    const replayed: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        for (const [status, response] of Object.entries(operation.responses)) {
          expect([name, status, response.headers?.['Request-Id']]).toEqual([name, status, ref('Request-Id')]);
          expect([name, status, response.description]).not.toEqual([name, status, 'Default Response']);
          const limited = status === '429' || status === '503';
          expect([name, status, response.headers?.['Retry-After']]).toEqual([
            name,
            status,
            limited ? ref('Retry-After') : undefined,
          ]);
        }
        if (operation.responses['200']?.headers?.['Idempotent-Replayed']) replayed.push(name);
        expect([name, operation.responses['400']?.headers?.['Idempotent-Replayed']]).toEqual([
          name,
          undefined,
        ]);
      }
    }
    // Every POST of the merchant API takes an Idempotency-Key, and only they do, but the webhook secret's
    // rotation: its answer holds a secret, which is never kept to be replayed.
    const merchantPosts = Object.entries(document.paths)
      .filter(([, item]) => item.post?.security?.some((scheme) => 'apiKey' in scheme))
      .map(([path]) => `POST ${path}`)
      .filter((name) => name !== 'POST /account/webhook-secret/rotate');
    expect(replayed.sort()).toEqual(merchantPosts.sort());
    const methodNotAllowed = document.components.responses.MethodNotAllowed;
    expect(methodNotAllowed?.headers).toEqual({ Allow: ref('Allow'), 'Request-Id': ref('Request-Id') });
    expect(methodNotAllowed?.description).toContain('METHOD_NOT_ALLOWED');
  });

  it("keeps /docs to its own files, out of frames, with no validator's address", async () => {
    for (const path of ['/docs/', '/docs/static/swagger-initializer.js']) {
      const answer = await service.call('GET', path);
      expect([path, answer.status, answer.headers['content-security-policy']]).toEqual([path, 200, DOCS_CSP]);
    }
    const initializer = await service.call('GET', '/docs/static/swagger-initializer.js');
    expect(initializer.text).toMatch(/"validatorUrl":\s*null/);
    expect(initializer.text).not.toContain('swagger.io');
  });

  it('tells browsers not to guess a type on every answer: JSON, errors, HTML, scripts', async () => {
    for (const path of ['/healthz', '/nothing/here', '/docs/', '/sdk/wallet-sdk.js', '/checkout/ord_none']) {
      const answer = await service.call('GET', path);
      expect([path, answer.headers['x-content-type-options']]).toEqual([path, 'nosniff']);
    }
  });
});
