import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { type Receiver, startReceiver } from '../../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../../test-support/service.js';
import { until } from '../../test-support/wait.js';

const DATE_TIME_RULE = 'must be a date-time with its time zone, such as 2026-11-29T00:00:00Z (RFC 3339)';

interface Listed {
  requestId: string;
  merchantReference: string;
  state: string;
  createdAt: string;
}

describe.each(engines())('GET /payments/credentials as a list on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string };
  let other: { merchantId: string; apiKey: string };
  let session: Awaited<ReturnType<TestService['session']>>;
  /** The shop's requests by reference, in the order they were made. */
  const made = new Map<string, string>();
  let othersRequest: string;

  const list = (query: string, apiKey = shop.apiKey) =>
    service.call('GET', `/payments/credentials${query}`, { apiKey });
  const ids = (response: { json: { data: Listed[] } }) => response.json.data.map((each) => each.requestId);
  const read = async (requestId: string) =>
    (await service.call('GET', `/payments/credentials/${requestId}`, { apiKey: shop.apiKey })).json;

  /** A request whose webhook the receiver answers with `status`, once that answer is recorded. */
  const ask = async (merchantReference: string, status: 204 | 500): Promise<string> => {
    receiver.respondWith(status);
    const response = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session, { merchantReference }),
    });
    expect(response.status).toBe(200);
    const { requestId } = response.json;
    await until(async () => {
      const request = await read(requestId);
      return status === 204 ? request.state === 'DELIVERED' : request.failureReason === 'HTTP 500';
    });
    made.set(merchantReference, requestId);
    return requestId;
  };

  beforeAll(async () => {
    // 10 minutes between attempts: a refused webhook stays ACKNOWLEDGED for the whole test.
    service = await startTestService(engine, { CREDENTIALS_RETRY_DELAYS_MS: '600000' });
    receiver = await startReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url });
    other = await service.merchant({ webhookUrl: receiver.url });
    session = await service.session(shop.apiKey);
    await ask('ok-1', 204);
    const refused = await ask('fail-1', 500);
    await ask('ok-2', 204);
    await ask('wait-1', 500);
    await ask('ok-3', 204);
    // Linked to the latest request for the card, ok-3: one request of the page with a report.
    const reported = await service.call('POST', '/payments/externalresponse', {
      apiKey: shop.apiKey,
      body: {
        paymentId: session.paymentMethods[0]?.paymentId,
        pspRawResponse: '{"status":"approved"}',
        amount: 2599,
        pspHostName: 'processor.example',
        currency: 'USD',
        isRecurring: false,
      },
    });
    expect(reported.status).toBe(200);
    // The end of a retry schedule, which takes 10 minutes here: the message of fail-1 given up.
    const { webhook } = (
      await service.call('GET', `/payments/credentials/${refused}`, { apiKey: shop.apiKey })
    ).json;
    await service.services.db.kysely
      .updateTable('webhook_messages')
      .set({ state: 'FAILED' })
      .where('id', '=', webhook.messageId)
      .execute();
    const otherSession = await service.session(other.apiKey);
    receiver.respondWith(204);
    const others = await service.call('POST', '/payments/credentials', {
      apiKey: other.apiKey,
      body: credentialsBody(otherSession, { merchantReference: 'ok-1' }),
    });
    othersRequest = others.json.requestId;
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('lists the merchant’s requests newest first, each as GET /payments/credentials/{requestId} answers it', async () => {
    const whole = await list('');
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.json).sort()).toEqual(['data', 'hasMore']);
    expect(whole.json.hasMore).toBe(false);
    expect([...ids(whole)].sort()).toEqual([...made.values()].sort());
    const times = whole.json.data.map((each: Listed) => each.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    for (const each of whole.json.data) expect(each).toEqual(await read(each.requestId));
    const reported = whole.json.data.filter(
      (each: { externalResponses: unknown[] }) => each.externalResponses.length,
    );
    expect(reported.map((each: Listed) => each.merchantReference)).toEqual(['ok-3']);
    expect(whole.text).not.toContain('4111111111111111');
  });

  it('filters by state, the request’s own', async () => {
    const byState = async (state: string) => new Set(ids(await list(`?state=${state}`)));
    expect(await byState('DELIVERED')).toEqual(
      new Set([made.get('ok-1'), made.get('ok-2'), made.get('ok-3')]),
    );
    expect(await byState('ACKNOWLEDGED')).toEqual(new Set([made.get('wait-1')]));
    const failed = await list('?state=FAILED');
    expect(ids(failed)).toEqual([made.get('fail-1')]);
    expect(failed.json.data[0]).toMatchObject({ state: 'FAILED', failureReason: 'HTTP 500' });
  });

  it('filters by creation time: createdSince includes its instant, createdBefore excludes it', async () => {
    const whole: Listed[] = (await list('')).json.data;
    const middle = whole[2] as Listed;
    const since = await list(`?createdSince=${middle.createdAt}`);
    expect(ids(since)).toEqual(
      whole.filter((each) => each.createdAt >= middle.createdAt).map((each) => each.requestId),
    );
    const before = await list(`?createdBefore=${middle.createdAt}`);
    expect(ids(before)).toEqual(
      whole.filter((each) => each.createdAt < middle.createdAt).map((each) => each.requestId),
    );
    const failedToday = await list(
      `?state=FAILED&createdSince=${new Date(Date.now() - 86_400_000).toISOString()}`,
    );
    expect(ids(failedToday)).toEqual([made.get('fail-1')]);
  });

  it('walks the pages once each, with no duplicate or gap, while new requests arrive', async () => {
    const before: string[] = ids(await list('?limit=100'));
    const walked: string[] = [];
    const arrived: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await list(`?limit=2${cursor}`);
      expect(page.status).toBe(200);
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      walked.push(...ids(page));
      receiver.respondWith(204);
      const added = await service.call('POST', '/payments/credentials', {
        apiKey: shop.apiKey,
        body: credentialsBody(session, { merchantReference: `during-${arrived.length}` }),
      });
      arrived.push(added.json.requestId);
      if (!page.json.hasMore) break;
      cursor = `&startingAfter=${page.json.data.at(-1).requestId}`;
    }
    expect(walked).toEqual(before);
    const now: string[] = ids(await list('?limit=100'));
    // The new ones first: as a set, since requests of one millisecond follow their ids.
    expect(new Set(now.slice(0, arrived.length))).toEqual(new Set(arrived));
    expect(now.slice(arrived.length)).toEqual(before);
  });

  it('shows a merchant only its own requests, and answers another merchant’s as the cursor like a missing one', async () => {
    const mine = ids(await list('?limit=100'));
    expect(mine).not.toContain(othersRequest);
    expect(ids(await list('', other.apiKey))).toEqual([othersRequest]);
    const byReference = await list('?merchantReference=ok-1');
    expect(ids(byReference)).toEqual([made.get('ok-1')]);

    const foreign = await list(`?startingAfter=${othersRequest}`);
    const missing = await list('?startingAfter=crq_missing');
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({
      errorCode: 'CREDENTIALS_REQUEST_NOT_FOUND',
      errorMessage: `startingAfter: credentials request ${othersRequest} was not found.`,
    });
    expect(missing.json).toEqual({
      errorCode: 'CREDENTIALS_REQUEST_NOT_FOUND',
      errorMessage: 'startingAfter: credentials request crq_missing was not found.',
    });
  });

  it('keeps the merchantReference look-up answering as before: every request with it, without hasMore', async () => {
    const found = await list('?merchantReference=ok-2');
    expect(found.status).toBe(200);
    expect(Object.keys(found.json)).toEqual(['data']);
    expect(ids(found)).toEqual([made.get('ok-2')]);
  });

  it.each([
    ['?state=PENDING', 'query parameter state must be one of ACKNOWLEDGED, DELIVERED, FAILED'],
    ['?createdSince=yesterday', `query parameter createdSince ${DATE_TIME_RULE}`],
    ['?createdBefore=2026-11-29', `query parameter createdBefore ${DATE_TIME_RULE}`],
    ['?limit=0', 'query parameter limit must be at least 1'],
    ['?limit=101', 'query parameter limit must be at most 100'],
    ['?startingAfter=', 'query parameter startingAfter must not be empty'],
    ['?since=2026-11-29T00:00:00Z', 'query parameter since is not one this route takes'],
    [
      '?merchantReference=ok-1&state=FAILED',
      'query parameter state cannot be combined with merchantReference, which answers every request made with it',
    ],
    [
      '?merchantReference=ok-1&createdSince=2026-11-29T00:00:00Z',
      'query parameter createdSince cannot be combined with merchantReference, which answers every request made with it',
    ],
    [
      '?merchantReference=ok-1&startingAfter=crq_1',
      'query parameter startingAfter cannot be combined with merchantReference, which answers every request made with it',
    ],
  ])('refuses %s with 400 naming the parameter and the rule', async (query, message) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ errorCode: 'VALIDATION_ERROR', errorMessage: message });
  });

  it('needs an API key', async () => {
    const response = await service.call('GET', '/payments/credentials');
    expect(response.status).toBe(401);
    expect(response.json.errorCode).toBe('UNAUTHORIZED');
  });
});
