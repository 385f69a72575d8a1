import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../../test-support/db.js';
import { type Receiver, startReceiver, verifiedBody } from '../../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../../test-support/service.js';
import { until } from '../../test-support/wait.js';
import { insertMessages, newMessage, type WebhookMessageRow } from '../../webhooks/outbox.js';
import { RECOVER_BATCH } from '../../webhooks/service.js';

/** Newest first, as the route lists: created_at, then id, both descending. */
function listOrder(rows: readonly WebhookMessageRow[]): string[] {
  return [...rows].sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1)).map((row) => row.id);
}

describe.each(engines())('GET /webhooks/messages on %s', (engine) => {
  let service: TestService;
  let shop: { merchantId: string; apiKey: string };
  let other: { merchantId: string; apiKey: string };
  let rows: WebhookMessageRow[];
  let otherRow: WebhookMessageRow;

  /** Follows `startingAfter` from the first page to the one saying `hasMore: false`. */
  const walk = async (query: string): Promise<{ ids: string[]; sizes: number[]; hasMore: boolean[] }> => {
    const walked = { ids: [] as string[], sizes: [] as number[], hasMore: [] as boolean[] };
    let startingAfter: string | undefined;
    for (;;) {
      const cursor = startingAfter === undefined ? '' : `&startingAfter=${startingAfter}`;
      const response = await service.call('GET', `/webhooks/messages?${query}${cursor}`, {
        apiKey: shop.apiKey,
      });
      expect(response.status, response.text).toBe(200);
      const ids: string[] = response.json.data.map((m: { id: string }) => m.id);
      walked.ids.push(...ids);
      walked.sizes.push(ids.length);
      walked.hasMore.push(response.json.hasMore);
      if (!response.json.hasMore || walked.sizes.length > 10) return walked;
      startingAfter = ids.at(-1);
    }
  };

  beforeAll(async () => {
    service = await startTestService(engine);
    shop = await service.merchant();
    other = await service.merchant();
    // 105 settled messages (the dispatcher leaves them alone), three to a millisecond so that the id
    // decides between equal times; every third one FAILED.
    rows = Array.from({ length: 105 }, (_, i) => ({
      ...newMessage(
        { merchantId: shop.merchantId, eventName: 'ORDER', subjectId: `ord_${i}`, schedule: 'default' },
        1_700_000_000_000 + Math.floor(i / 3),
        0,
      ),
      state: i % 3 === 0 ? ('FAILED' as const) : ('DELIVERED' as const),
    }));
    otherRow = {
      ...newMessage(
        { merchantId: other.merchantId, eventName: 'ORDER', subjectId: 'ord_x', schedule: 'default' },
        1_700_000_000_010,
        0,
      ),
      state: 'DELIVERED',
    };
    await insertMessages(service.services.db.kysely, [...rows, otherRow]);
  });
  afterAll(() => service.close());

  it('walks every message once, newest first, in pages of 50', async () => {
    const walked = await walk('limit=50');
    expect(walked.sizes).toEqual([50, 50, 5]);
    expect(walked.hasMore).toEqual([true, true, false]);
    expect(walked.ids).toEqual(listOrder(rows));
    expect(new Set(walked.ids).size).toBe(105);
  });

  it('keeps the first page as it was: the newest 20, now with hasMore', async () => {
    const response = await service.call('GET', '/webhooks/messages', { apiKey: shop.apiKey });
    expect(response.status).toBe(200);
    expect(Object.keys(response.json).sort()).toEqual(['data', 'hasMore']);
    expect(response.json.data.map((m: { id: string }) => m.id)).toEqual(listOrder(rows).slice(0, 20));
    expect(response.json.hasMore).toBe(true);
  });

  it('pages through a state filter', async () => {
    const failed = rows.filter((row) => row.state === 'FAILED');
    const walked = await walk('state=FAILED&limit=15');
    expect(walked.sizes).toEqual([15, 15, 5]);
    expect(walked.hasMore).toEqual([true, true, false]);
    expect(walked.ids).toEqual(listOrder(failed));
  });

  it('pages through a creation window: createdSince includes its instant, createdBefore excludes it', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const [since, before] = [1_700_000_000_010, 1_700_000_000_020];
    const inside = rows.filter((row) => row.created_at >= since && row.created_at < before);
    expect(inside).toHaveLength(30);
    const walked = await walk(`createdSince=${iso(since)}&createdBefore=${iso(before)}&limit=12`);
    expect(walked.sizes).toEqual([12, 12, 6]);
    expect(walked.ids).toEqual(listOrder(inside));
    const failedSince = await walk(`state=FAILED&createdSince=${iso(1_700_000_000_030)}`);
    expect(failedSince.ids).toEqual(
      listOrder(rows.filter((row) => row.state === 'FAILED' && row.created_at >= 1_700_000_000_030)),
    );
  });

  it('takes every documented parameter together', async () => {
    const byId = new Map(rows.map((row) => [row.id, row]));
    const [newest] = listOrder(rows);
    const target = listOrder(rows).find((id) => id !== newest && byId.get(id)?.state === 'DELIVERED');
    const query = `state=DELIVERED&subjectId=${byId.get(target as string)?.subject_id}&limit=5`;
    const from = async (startingAfter: string) => {
      const response = await service.call(
        'GET',
        `/webhooks/messages?${query}&startingAfter=${startingAfter}`,
        {
          apiKey: shop.apiKey,
        },
      );
      expect(response.status, response.text).toBe(200);
      return response.json;
    };
    expect(await from(newest as string)).toMatchObject({ data: [{ id: target }], hasMore: false });
    expect(await from(target as string)).toEqual({ data: [], hasMore: false });
  });

  it('answers another merchant’s message as a cursor exactly like a missing one: 404', async () => {
    const missingId = 'msg_00000000NoSuchMessage';
    const cursor = (id: string) =>
      service.call('GET', `/webhooks/messages?startingAfter=${id}`, { apiKey: shop.apiKey });
    const foreign = await cursor(otherRow.id);
    const missing = await cursor(missingId);
    for (const response of [foreign, missing]) {
      expect(response.status).toBe(404);
      expect(response.json.errorCode).toBe('WEBHOOK_MESSAGE_NOT_FOUND');
    }
    expect(foreign.json.errorMessage.replace(otherRow.id, '…')).toBe(
      missing.json.errorMessage.replace(missingId, '…'),
    );
    // Its owner may page from it.
    const own = await service.call('GET', `/webhooks/messages?startingAfter=${otherRow.id}`, {
      apiKey: other.apiKey,
    });
    expect(own.json).toEqual({ data: [], hasMore: false });
  });

  it('refuses an unknown query parameter, naming it, instead of ignoring it, and names every state allowed', async () => {
    for (const parameter of ['offset', 'page', 'cursor', 'before']) {
      const response = await service.call('GET', `/webhooks/messages?${parameter}=50`, {
        apiKey: shop.apiKey,
      });
      expect(response.status).toBe(400);
      expect(response.json.errorCode).toBe('VALIDATION_ERROR');
      expect(response.json.errorMessage).toBe(`query parameter ${parameter} is not one this route takes`);
    }
    const state = await service.call('GET', '/webhooks/messages?state=DONE', { apiKey: shop.apiKey });
    expect([state.status, state.json.errorMessage]).toEqual([
      400,
      'query parameter state must be one of PENDING, DELIVERED, FAILED',
    ]);
  });

  it('documents startingAfter and hasMore in /openapi.json', async () => {
    const response = await service.call('GET', '/openapi.json');
    const list = response.json.paths['/webhooks/messages'].get;
    const startingAfter = list.parameters.find((p: { name: string }) => p.name === 'startingAfter');
    expect(startingAfter).toMatchObject({ in: 'query', required: false });
    expect(startingAfter.description ?? startingAfter.schema.description).toContain('previous page');
    const ok = list.responses['200'].content['application/json'].schema;
    expect(ok.required).toEqual(expect.arrayContaining(['data', 'hasMore']));
    expect(ok.properties.hasMore).toMatchObject({ type: 'boolean' });
    expect(ok.properties.hasMore.description).toContain('startingAfter');
    expect(list.responses['404'].description).toContain('WEBHOOK_MESSAGE_NOT_FOUND');
  });
});

describe.each(engines())('POST /webhooks/messages/recover on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shop: { merchantId: string; apiKey: string; webhookSecret: string };

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
    shop = await service.merchant({ webhookUrl: receiver.url });
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('sends a credentials webhook given up during an outage again, with the same webhook-id', async () => {
    const since = new Date().toISOString();
    // Four attempts (the test schedule's three retries) meet the outage.
    receiver.respondWith(500, 500, 500, 500);
    const session = await service.session(shop.apiKey);
    const ack = await service.call('POST', '/payments/credentials', {
      apiKey: shop.apiKey,
      body: credentialsBody(session, { merchantReference: 'recover-1' }),
    });
    expect(ack.status).toBe(200);
    const lookup = () =>
      service.call('GET', `/payments/credentials/${ack.json.requestId}`, { apiKey: shop.apiKey });
    // The first attempt also waits for the delivery thread to start, seconds on a loaded machine.
    await until(async () => (await lookup()).json.state === 'FAILED', 15_000);
    expect(receiver.received).toHaveLength(4);

    const recovered = receiver.nth(5);
    const response = await service.call('POST', '/webhooks/messages/recover', {
      apiKey: shop.apiKey,
      body: { since },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({ recovered: 1, hasMore: false, notSent: 0 });
    const webhook = await recovered;
    expect(webhook.headers['webhook-id']).toBe(receiver.received[0]?.headers['webhook-id']);
    expect(verifiedBody<{ merchantReference: string }>(shop.webhookSecret, webhook).merchantReference).toBe(
      'recover-1',
    );
    const view = await until(async () => {
      const current = (await lookup()).json;
      return current.state === 'DELIVERED' && current;
    });
    expect(view.webhook.attempts.map((attempt: { statusCode: number }) => attempt.statusCode)).toEqual([
      500, 500, 500, 500, 200,
    ]);
  });

  it('refuses a missing or malformed since, naming it', async () => {
    for (const body of [{}, { since: 'yesterday' }, { since: 1_700_000_000_000 }]) {
      const response = await service.call('POST', '/webhooks/messages/recover', {
        apiKey: shop.apiKey,
        body,
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.json.errorCode).toBe('VALIDATION_ERROR');
      expect(response.json.errorMessage).toContain('since');
    }
    const anonymous = await service.call('POST', '/webhooks/messages/recover', {
      body: { since: new Date().toISOString() },
    });
    expect(anonymous.status).toBe(401);
  });
});

describe.each(engines())('which messages POST /webhooks/messages/recover takes, on %s', (engine) => {
  // No dispatcher: the messages stay as the recovery leaves them.
  let service: TestService;
  let shop: { merchantId: string; apiKey: string };
  let other: { merchantId: string; apiKey: string };

  beforeAll(async () => {
    service = await startTestService(engine, { WEBHOOK_DISPATCH: 'off' });
    shop = await service.merchant();
    other = await service.merchant();
  });
  afterAll(() => service.close());

  const failedAt = (merchantId: string, at: number, i: number): WebhookMessageRow => ({
    ...newMessage({ merchantId, eventName: 'ORDER', subjectId: `ord_${i}`, schedule: 'default' }, at, 0),
    state: 'FAILED',
    attempt_count: 7,
  });
  const recover = (since: number) =>
    service.call('POST', '/webhooks/messages/recover', {
      apiKey: shop.apiKey,
      body: { since: new Date(since).toISOString() },
    });
  const stateOf = async (id: string) =>
    (await service.call('GET', `/webhooks/messages/${id}`, { apiKey: shop.apiKey })).json;

  it('takes only this merchant’s FAILED messages given up since then, a batch at a time', async () => {
    const since = Date.now() - 60_000;
    const before = failedAt(shop.merchantId, since - 1, 0);
    const delivered = { ...failedAt(shop.merchantId, since + 1, 1), state: 'DELIVERED' as const };
    const others = failedAt(other.merchantId, since + 1, 2);
    const taken = Array.from({ length: RECOVER_BATCH + 1 }, (_, i) =>
      failedAt(shop.merchantId, since + i, i + 3),
    );
    await insertMessages(service.services.db.kysely, [before, delivered, others, ...taken]);

    expect((await recover(since)).json).toEqual({ recovered: RECOVER_BATCH, hasMore: true, notSent: 0 });
    expect((await recover(since)).json).toEqual({ recovered: 1, hasMore: false, notSent: 0 });
    expect((await recover(since)).json).toEqual({ recovered: 0, hasMore: false, notSent: 0 });

    for (const row of [taken[0], taken.at(-1)] as WebhookMessageRow[]) {
      expect(await stateOf(row.id)).toMatchObject({ state: 'PENDING', attemptCount: 0 });
    }
    expect(await stateOf(before.id)).toMatchObject({ state: 'FAILED', attemptCount: 7 });
    expect(await stateOf(delivered.id)).toMatchObject({ state: 'DELIVERED' });
    const foreign = await service.call('GET', `/webhooks/messages/${others.id}`, { apiKey: other.apiKey });
    expect(foreign.json).toMatchObject({ state: 'FAILED', attemptCount: 7 });
  });
});

describe.each(engines())('POST /webhooks/test on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    service = await startTestService(engine);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  const sendTest = (apiKey: string, headers: Record<string, string> = {}) =>
    service.call('POST', '/webhooks/test', { apiKey, headers });

  it('sends one signed WEBHOOK_TEST webhook now and reports the answer, storing nothing', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const arrived = receiver.next();
    const response = await sendTest(shop.apiKey);
    expect(response.status, response.text).toBe(200);
    expect(response.json).toEqual({
      webhookId: expect.stringMatching(/^tst_[0-9A-Za-z]{22}$/),
      url: receiver.url,
      delivered: true,
      statusCode: 200,
      latencyMs: expect.any(Number),
      error: null,
    });
    const webhook = await arrived;
    expect(webhook.headers['webhook-id']).toBe(response.json.webhookId);
    const body = verifiedBody<Record<string, unknown>>(shop.webhookSecret, webhook);
    expect(body).toEqual({
      eventName: 'WEBHOOK_TEST',
      merchantId: shop.merchantId,
      sentAt: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(body.sentAt as string))).toBe(false);
    const listed = await service.call('GET', '/webhooks/messages', { apiKey: shop.apiKey });
    expect(listed.json.data).toEqual([]);
  });

  it("reports a refusing endpoint's status, and a merchant without a URL", async () => {
    const refusing = await service.merchant({ webhookUrl: receiver.url });
    receiver.respondWith(500);
    const refused = await sendTest(refusing.apiKey);
    expect(refused.json).toMatchObject({ delivered: false, statusCode: 500, error: 'HTTP 500' });

    const nowhere = await service.merchant();
    const unsent = await sendTest(nowhere.apiKey);
    expect(unsent.status).toBe(200);
    expect(unsent.json).toMatchObject({
      url: null,
      delivered: false,
      statusCode: null,
      latencyMs: 0,
      error: 'The merchant has no webhook URL configured.',
    });
  });

  it('replays the answer to a repeated Idempotency-Key without sending again', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    const before = receiver.received.length;
    const first = await sendTest(shop.apiKey, { 'idempotency-key': 'test-once' });
    const again = await sendTest(shop.apiKey, { 'idempotency-key': 'test-once' });
    expect(again.json).toEqual(first.json);
    expect(receiver.received.length - before).toBe(1);
  });

  it('allows 10 a minute per merchant, then 429 with Retry-After', async () => {
    const shop = await service.merchant({ webhookUrl: receiver.url });
    for (let i = 0; i < 10; i++) expect((await sendTest(shop.apiKey)).status).toBe(200);
    const limited = await sendTest(shop.apiKey);
    expect(limited.status).toBe(429);
    expect(limited.json.errorCode).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another merchant's tests are counted apart.
    const other = await service.merchant({ webhookUrl: receiver.url });
    expect((await sendTest(other.apiKey)).status).toBe(200);
  });

  it('needs an API key', async () => {
    const response = await service.call('POST', '/webhooks/test');
    expect(response.status).toBe(401);
    expect(response.json.errorCode).toBe('UNAUTHORIZED');
  });
});
